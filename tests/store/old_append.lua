-- The append script as the store shipped it before the lean form (docs/store.md, "Stream
-- entries"), its code unchanged, for the tests that write games in that form
-- (tests/store/old_form.py). Never loaded by the store.
--
-- The one write path of the event store: append a batch of events to a game's stream.
--
-- Redis runs a script atomically, but it does not roll back the writes of a script that
-- fails half-way. So every check comes before the first write, and after the checks nothing
-- can fail: the batch lands whole or not at all.
--
-- KEYS[1] the game's event stream, KEYS[2] its command memos (a hash), KEYS[3] the outbox
--         stream of its shard. All three share one hash tag, hence one cluster slot.
-- ARGV[1] game id              ARGV[2] the expected head, "<version> <hash>" (hex)
-- ARGV[3] command id           ARGV[4] metadata
-- ARGV[5] the command memo to write, "<first> <last> <hash> <nonce> <digest>": the
--         request digest and the call's nonce are read from it when the id is known
-- ARGV[6] the new head, "<last> <hash>"                    ARGV[7] number of events n
-- ARGV[8 ..] n triples: entry id, event bytes, chain hash (computed by the client from the
--         head hash: Redis's Lua has no SHA-256, so the script checks the head instead)
--
-- Every string the script writes is made by the client: on this path of every append, each
-- string the Lua interpreter builds costs more than the client's f-string.
--
-- The command memos hash maps each command id to "<first> <last> <hash> <nonce> <digest>",
-- and its field "" (never a command id, which is not empty) to the head, "<version> <hash>",
-- so that one HMGET reads both and one HSET writes both: cheaper than reading the last entry
-- of the stream, on the path of every append. Only this script writes either.
--
-- Replies (the client turns them into results and typed errors):
--   {'ok'}                                    appended
--   {'again', first, last, hash}              this very call ran before (a client re-send)
--   {'duplicate', first, last, hash}          same command id and digest, another call
--   {'reused', first, last, hash}             same command id, other digest
--   {'conflict', version, hash}               the head is not the expected one
-- An XADD that refuses its entry id (the stream ahead of its head record: only a hand-edited
-- stream can be) stops the script with an error before any write.

local count = tonumber(ARGV[7])
if count == nil or count < 1 or #ARGV ~= 7 + 3 * count then
  return redis.error_reply('ERR patrician append: malformed arguments')
end
local command_id = ARGV[3]
local found = redis.call('HMGET', KEYS[2], command_id, '')

-- 1. Idempotency, before the version: a retried command carries a stale expected version,
--    and must still get its first result rather than a conflict.
if found[1] then
  local pattern = '^(%d+) (%d+) (%x+) (%S*) (.*)$'
  local first, last, hash, first_nonce, first_digest = string.match(found[1], pattern)
  local _, _, _, nonce, digest = string.match(ARGV[5], pattern)
  if first_digest ~= digest then
    return {'reused', first, last, hash}
  end
  if first_nonce == nonce then
    return {'again', first, last, hash}
  end
  return {'duplicate', first, last, hash}
end

-- 2. The head must be the one the client chained its hashes from: one string comparison.
--    It is parsed only to tell a refused client the true head.
local head = found[2] or '0 0000000000000000000000000000000000000000000000000000000000000000'
if head ~= ARGV[2] then
  local version, hash = string.match(head, '^(%d+) (%x+)$')
  return {'conflict', tonumber(version), hash}
end

-- 3. The writes. Entry id `<version>-1` makes XADD refuse an id at or below the stream's
--    top on its own; only the first XADD can meet that, and it is still before any write.
--    (redis.call, not pcall: catching costs more than the whole HSET below.)
redis.call('XADD', KEYS[1], ARGV[8], 'd', ARGV[9], 'h', ARGV[10], 'c', command_id, 'm', ARGV[4])
for i = 11, 7 + 3 * count, 3 do
  redis.call('XADD', KEYS[1], ARGV[i], 'd', ARGV[i + 1], 'h', ARGV[i + 2])
end
redis.call('HSET', KEYS[2], command_id, ARGV[5], '', ARGV[6])
redis.call('XADD', KEYS[3], '*', 'g', ARGV[1], 'c', ARGV[5])  -- the record names the versions
return {'ok'}
