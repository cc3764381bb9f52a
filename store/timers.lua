-- Replace a game's timers (its deadline and reminders) with those of a version, unless a
-- newer version set them already: a job run late for an older version changes nothing.
-- KEYS[1]: every timer (a sorted set, member by when it is due); KEYS[2]: the game's own
-- (a hash: "@version" and one field per member).
-- ARGV[1]: the version; then pairs of member and when it is due (seconds since the epoch).
local known = tonumber(redis.call('HGET', KEYS[2], '@version') or '-1')
if tonumber(ARGV[1]) < known then
  return 0
end
for _, member in ipairs(redis.call('HKEYS', KEYS[2])) do
  if member ~= '@version' then
    redis.call('ZREM', KEYS[1], member)
  end
end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], '@version', ARGV[1])
for i = 2, #ARGV, 2 do
  redis.call('ZADD', KEYS[1], ARGV[i + 1], ARGV[i])
  redis.call('HSET', KEYS[2], ARGV[i], '1')
end
return 1
