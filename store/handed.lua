-- Whether a player handed their seat in a game to a bot for good (R7, `store.handovers`), in
-- one round trip: HEXISTS of ARGV[1] in each of KEYS, the game's hand-overs and those made
-- before they moved into its slot (a single Redis only: on a cluster they lie in two slots).
for index = 1, #KEYS do
  if redis.call('HEXISTS', KEYS[index], ARGV[1]) == 1 then
    return 1
  end
end
return 0
