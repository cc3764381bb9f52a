-- Retire the live keys of an archived game, once its archive is written and verified
-- (store/archiving.py): only if the archive is the one the caller verified and the live
-- stream is the one it was made from, in one step, so that no append lands in between and
-- every reader finds the game in one form or the other at every instant.
--
-- KEYS[1] the game's event stream, KEYS[2] its command memos, KEYS[3] its snapshot,
--         KEYS[4] its archive (one hash tag).
-- ARGV[1] the archive's bytes as verified   ARGV[2] the stream's length   ARGV[3] its last id
-- ARGV[4] the head memo of the command memos hash ("" field)
-- Replies 1 (retired), 0 (the live keys are gone already: archived by another worker),
-- -1 (the game changed since, or its archive is not the one verified: nothing removed, and
-- an archive that no longer matches the live game is removed, the live keys being the truth).

if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
if redis.call('XLEN', KEYS[1]) ~= tonumber(ARGV[2]) or last[1] ~= ARGV[3]
    or redis.call('HGET', KEYS[2], '') ~= ARGV[4] then
  if redis.call('GET', KEYS[4]) == ARGV[1] then
    redis.call('DEL', KEYS[4])
  end
  return -1
end
if redis.call('GET', KEYS[4]) ~= ARGV[1] then
  return -1
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return 1
