-- Keep what rating a game did (store/ratings.py): the records of the games rated (the new one
-- and those after it, rated again), their place in the order, the ratings they leave and the
-- numbers shown; only if nothing was rated since the caller read (the revision), so that a
-- rating is always worked out from the ratings it replaces.
--
-- KEYS[1] the revision  KEYS[2] ratings now  KEYS[3] game records  KEYS[4] the order
-- KEYS[5] the numbers shown (one hash tag)
-- ARGV[1] the revision read ("" for none)  ARGV[2] how many games, then for each:
--   its id, its order member, its record; then for each rating: the identity, the rating,
--   the number shown.
-- Replies 1 (written) or 0 (rated meanwhile: read again; nothing written).

if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then
  return 0
end
local games = tonumber(ARGV[2])
local at = 3
for _ = 1, games do
  redis.call('HSET', KEYS[3], ARGV[at], ARGV[at + 2])
  redis.call('ZADD', KEYS[4], 0, ARGV[at + 1])
  at = at + 3
end
while at <= #ARGV do
  redis.call('HSET', KEYS[2], ARGV[at], ARGV[at + 1])
  redis.call('ZADD', KEYS[5], ARGV[at + 2], ARGV[at])
  at = at + 3
end
redis.call('INCR', KEYS[1])
return 1
