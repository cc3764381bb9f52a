-- Take a listing (a member of a sorted set scored by when it was listed) off its list, but only
-- if it is still older than a cutoff: a listing made again since, by a retried join say, stays.
-- A plain ZREM after reading the score could remove a listing renewed in between.
--
-- KEYS[1] the sorted set. ARGV[1] the member, ARGV[2] the cutoff (seconds since the epoch).
-- Reply: 1 if it was taken off, else 0.

local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) < tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
