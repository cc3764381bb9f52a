-- Read what loading a game from its snapshot needs, in one round trip and one consistent
-- moment: the snapshot, if it was saved under the caller's rules version tag, and the events
-- from the snapshot's version on, that version included so that the caller can check the
-- snapshot against the chain. Without a usable snapshot it returns {false, false} and the
-- caller reads the stream with a plain XRANGE: Redis copies a long XRANGE reply through Lua
-- tables several times slower than it sends it directly.
--
-- KEYS[1] the game's snapshot key, KEYS[2] its event stream. ARGV[1] the rules version tag.
-- Reply {snapshot, {{id, {field, value, ...}}, ...}} or {false, false}.

local snapshot = redis.call('GET', KEYS[1])
if snapshot then
  local version, tag = string.match(snapshot, '^(%d+) %x+ (%S+)\n')
  if tag == ARGV[1] then
    return {snapshot, redis.call('XRANGE', KEYS[2], version .. '-1', '+')}
  end
end
return {false, false}
