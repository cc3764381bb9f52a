-- The one write path of the event store: append a batch of events to a game's stream.
--
-- Redis runs a script atomically, but it does not roll back the writes of a script that
-- fails half-way. So every check comes before the first write, and after the checks nothing
-- can fail: the batch lands whole or not at all.
--
-- KEYS[1] the game's event stream, KEYS[2] its command records (a hash), KEYS[3] the outbox
--         stream of its shard. All three share one hash tag, hence one cluster slot.
-- ARGV[1] game id              ARGV[2] expected version    ARGV[3] expected head hash (hex)
-- ARGV[4] command id           ARGV[5] request digest      ARGV[6] call nonce
-- ARGV[7] metadata             ARGV[8] number of events n
-- ARGV[9 ..] n pairs: event bytes, chain hash (computed by the client from the head hash:
--         Redis's Lua has no SHA-256, so the script checks the head instead of hashing)
--
-- The command records hash maps each command id to "<first> <last> <hash> <nonce> <digest>",
-- and its field "" (never a command id, which is not empty) to the head, "<version> <hash>",
-- so that one HMGET reads both and one HSET writes both: cheaper than reading the last entry
-- of the stream, on the path of every append. Only this script writes either.
--
-- Replies (the client turns them into results and typed errors):
--   {'ok', first, last}                       appended
--   {'again', first, last, hash}              this very call ran before (a client re-send)
--   {'duplicate', first, last, hash}          same command id and digest, another call
--   {'reused', first, last, hash}             same command id, other digest
--   {'conflict', version, hash}               the head is not the expected one
--   {'refused', version, hash}                XADD itself refused the first entry id

local count = tonumber(ARGV[8])
if count == nil or count < 1 or #ARGV ~= 8 + 2 * count then
  return redis.error_reply('ERR patrician append: malformed arguments')
end
local command_id, digest, nonce = ARGV[4], ARGV[5], ARGV[6]
local found = redis.call('HMGET', KEYS[2], command_id, '')

-- 1. Idempotency, before the version: a retried command carries a stale expected version,
--    and must still get its first result rather than a conflict.
if found[1] then
  local first, last, hash, first_nonce, first_digest =
    string.match(found[1], '^(%d+) (%d+) (%x+) (%S*) (.*)$')
  if first_digest ~= digest then
    return {'reused', first, last, hash}
  end
  if first_nonce == nonce then
    return {'again', first, last, hash}
  end
  return {'duplicate', first, last, hash}
end

-- 2. The head must be the one the client chained its hashes from. The head record is
--    "<version> <hash>", so the check is one string comparison; it is parsed only to tell a
--    refused client the true head.
local head = found[2] or ('0 ' .. string.rep('0', 64))
if head ~= ARGV[2] .. ' ' .. ARGV[3] then
  local version, hash = string.match(head, '^(%d+) (%x+)$')
  return {'conflict', tonumber(version), hash}
end

-- 3. The writes. Entry id `<version>-1` makes XADD refuse an id at or below the stream's
--    top on its own; only the first XADD can meet that, and it is still before any write.
local expected = tonumber(ARGV[2])
local last = expected + count
local added = redis.pcall('XADD', KEYS[1], (expected + 1) .. '-1', 'd', ARGV[9], 'h', ARGV[10],
  'c', command_id, 'm', ARGV[7])
if type(added) == 'table' and added.err then
  local version, hash = string.match(head, '^(%d+) (%x+)$')
  return {'refused', tonumber(version), hash}
end
for i = 2, count do
  redis.call('XADD', KEYS[1], (expected + i) .. '-1', 'd', ARGV[7 + 2 * i], 'h', ARGV[8 + 2 * i])
end
local last_hash = ARGV[8 + 2 * count]
redis.call('HSET', KEYS[2],
  command_id, (expected + 1) .. ' ' .. last .. ' ' .. last_hash .. ' ' .. nonce .. ' ' .. digest,
  '', last .. ' ' .. last_hash)
redis.call('XADD', KEYS[3], '*', 'g', ARGV[1], 'f', expected + 1, 'l', last)
return {'ok', expected + 1, last}
