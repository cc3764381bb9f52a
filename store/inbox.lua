-- Write a game's entry in a player's inbox, unless the entry there is for a newer version: the projection and its checkpoint (the version) in one step, so that an
-- append's follow-up applied twice, or late after a newer one, changes nothing.
--
-- KEYS[1] the player's inbox (a hash: game id -> "<version> <entry>"). ARGV[1] the game id,
-- ARGV[2] the version, ARGV[3] the entry.
-- (The same version may be written again: its clocks move when a player goes on vacation.)
-- Reply: 1 if it was written, else 0.

local found = redis.call('HGET', KEYS[1], ARGV[1])
if found then
  local version = tonumber(string.match(found, '^(%d+) '))
  if version and version > tonumber(ARGV[2]) then
    return 0
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ' ' .. ARGV[3])
return 1
