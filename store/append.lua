-- The one write path of the event store: append a batch of events to a game's stream.
--
-- Redis runs a script atomically, but it does not roll back the writes of a script that
-- fails half-way. So every check comes before the first write, and after the checks nothing
-- can fail: the batch lands whole or not at all.
--
-- KEYS[1] the game's event stream, KEYS[2] its command memos (a hash), KEYS[3] the outbox
--         stream of its shard, KEYS[4] the game's archive (docs/store.md, "Archive"). All
--         four share one hash tag, hence one cluster slot. Only when ARGV[12] names a player:
--         KEYS[5] the game's hand-overs (`store.handovers`, the same slot), and on a single
--         Redis KEYS[6], those made before they moved there (in no slot of the game's: on a
--         cluster the client asks it before).
-- ARGV[1] game id
-- ARGV[2] the expected head, "<version> <32 raw bytes>" (the lean form of docs/store.md)
-- ARGV[3] the same head as a game stored before the lean form keeps it, "<version> <hex>"
-- ARGV[4] the field of the command's memo: 16 bytes of the SHA-256 of its id
-- ARGV[5] the command id itself, which names the memos of a game of before the lean form
-- ARGV[6] the command id as the first entry's field `c` keeps it
-- ARGV[7] the metadata's field, 'm' (opaque) or 'M' (compact)    ARGV[8] metadata
-- ARGV[9] the command memo to write, "<first> <last> <nonce><digest>" (8 raw bytes of the
--         call's nonce, 16 of the request digest); both are read from it when the id is known
-- ARGV[10] the new head, "<last> <32 raw bytes>"           ARGV[11] number of events n
-- ARGV[12] the player who acts, when a hand-over of their seat refuses the append, else ''
-- ARGV[13 ..] n triples: entry id, event bytes, chain hash (32 raw bytes, computed by the
--         client from the head hash: Redis's Lua has no SHA-256, so the script checks the head)
--
-- Every string the script writes is made by the client: on this path of every append, each
-- string the Lua interpreter builds costs more than the client's f-string.
--
-- The command memos hash maps each command (16 bytes of the hash of its id) to its memo,
-- and its field "" (never such a key, nor a command id, which is not empty) to the head, so that one HMGET reads both and one HSET
-- writes both: cheaper than reading the last entry of the stream, on the path of every
-- append. Only this script writes either. A game stored before the lean form has memos
-- "<first> <last> <hash hex> <nonce> <digest hex>" under the command ids themselves and a hex
-- head: both are still read here, and its new appends are written in the lean form.
--
-- Replies (the client turns them into results and typed errors):
--   {'ok'}                                    appended
--   {'again', first, last, hash}              this very call ran before (a client re-send)
--   {'duplicate', first, last, hash}          same command id and digest, another call
--   {'reused', first, last, hash}             same command id, other digest
--   {'conflict', version, hash}               the head is not the expected one
--   {'handed'}                                ARGV[12] handed their seat to a bot for good
--   {'archived'}                              the game is archived: the client answers
-- (hash: 32 raw bytes or, from a memo of before the lean form, 64 hex digits.)
-- An XADD that refuses its entry id (the stream ahead of its head memo: only a hand-edited
-- stream can be) stops the script with an error before any write.

local count = tonumber(ARGV[11])
if count == nil or count < 1 or #ARGV ~= 12 + 3 * count then
  return redis.error_reply('ERR patrician append: malformed arguments')
end
local found = redis.call('HMGET', KEYS[2], ARGV[4], ARGV[5], '')
local known = found[1] or found[2]

-- 0. No head: a new game, or one whose live keys were archived (one EXISTS, on a game's
--    first append only). An archived game takes no append: the client tells why.
if not found[3] and redis.call('EXISTS', KEYS[4]) == 1 then
  return {'archived'}
end

-- 1. Idempotency, before the version: a retried command carries a stale expected version,
--    and must still get its first result rather than a conflict.
if known then
  local first, last, rest = string.match(known, '^(%d+) (%d+) (.*)$')
  local call = string.match(ARGV[9], '^%d+ %d+ (.*)$')
  local nonce, digest = string.sub(call, 1, 8), string.sub(call, 9)
  local first_nonce, first_digest, hash = string.sub(rest, 1, 8), string.sub(rest, 9), nil
  if #rest ~= 24 then  -- a memo of before the lean form: "<hash> <nonce> <digest>", in hex
    hash, first_nonce, first_digest = string.match(rest, '^(%x+) (%S*) (.*)$')
    nonce = nil  -- no call of today's sent it
    digest = (digest:gsub('.', function(c) return string.format('%02x', string.byte(c)) end))
    first_digest = string.sub(first_digest, 1, #digest)
  else  -- the lean memo names no hash: its last entry holds it
    local fields = redis.call('XRANGE', KEYS[1], last .. '-1', last .. '-1')[1][2]
    for i = 1, #fields, 2 do
      if fields[i] == 'H' or fields[i] == 'h' then
        hash = fields[i + 1]
      end
    end
  end
  if first_digest ~= digest then
    return {'reused', first, last, hash}
  end
  if first_nonce == nonce then
    return {'again', first, last, hash}
  end
  return {'duplicate', first, last, hash}
end

-- 2. The head must be the one the client chained its hashes from: one string comparison
--    (two for a game whose head memo is still in the form of before). It is parsed only
--    to tell a refused client the true head.
local head = found[3] or ('0 ' .. string.rep('\0', 32))  -- a new game: version 0
if head ~= ARGV[2] and head ~= ARGV[3] then
  local version, hash = string.match(head, '^(%d+) (.*)$')
  return {'conflict', tonumber(version), hash}
end

-- 3. A player who handed their seat to a bot for good acts no more (R7): checked here, with
--    the append, so that no command of theirs lands after the hand-over and no command
--    costs a round trip of its own for it. After the idempotency (a command accepted before
--    the hand-over, sent again, gets its result) and the head (a stale version is told first).
if ARGV[12] ~= '' then
  for index = 5, #KEYS do
    if redis.call('HEXISTS', KEYS[index], ARGV[12]) == 1 then
      return {'handed'}
    end
  end
end

-- 4. The writes. Entry id `<version>-1` makes XADD refuse an id at or below the stream's
--    top on its own; only the first XADD can meet that, and it is still before any write.
--    (redis.call, not pcall: catching costs more than the whole HSET below.)
redis.call('XADD', KEYS[1], ARGV[13], 'd', ARGV[14], 'H', ARGV[15], 'c', ARGV[6], ARGV[7], ARGV[8])
for i = 16, 12 + 3 * count, 3 do
  redis.call('XADD', KEYS[1], ARGV[i], 'd', ARGV[i + 1], 'H', ARGV[i + 2])
end
redis.call('HSET', KEYS[2], ARGV[4], ARGV[9], '', ARGV[10])
-- the notice: the memo names the versions; the metadata (who, when, the request id) is what
-- the follow-up would otherwise read back from the stream
redis.call('XADD', KEYS[3], '*', 'g', ARGV[1], 'c', ARGV[9], ARGV[7], ARGV[8])
return {'ok'}
