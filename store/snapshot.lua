-- Save a state snapshot of a game, keeping only the latest one.
--
-- KEYS[1] the game's snapshot key, KEYS[2] its event stream (same hash tag).
-- ARGV[1] version of the state, ARGV[2] rules version tag (no spaces), ARGV[3] state bytes.
-- The stored value is "<version> <hash of that version's event, hex> <tag>\n<state bytes>"; the
-- hash is read from the stream here, so a snapshot always names the event it follows and a
-- loader can check it against the stream instead of trusting it.
-- Replies 1 (saved), 0 (a snapshot as new or newer with the same tag is kept), -1 (no event
-- with that version).

local version = tonumber(ARGV[1])
local id = string.format('%d-1', version)
local entry = redis.call('XRANGE', KEYS[2], id, id)
if not entry[1] then
  return -1
end
local hash = nil
local fields = entry[1][2]
for i = 1, #fields, 2 do
  if fields[i] == 'h' then  -- an entry of before the lean form: the hash in hex
    hash = fields[i + 1]
  elseif fields[i] == 'H' then  -- 32 raw bytes: the header names it in hex
    hash = (fields[i + 1]:gsub('.', function(c) return string.format('%02x', string.byte(c)) end))
  end
end
-- The header is short: read it alone rather than the whole saved state.
local current = redis.call('GETRANGE', KEYS[1], 0, 255)
local saved, tag = string.match(current, '^(%d+) %x+ (%S+)\n')
if tag == ARGV[2] and tonumber(saved) >= version then
  return 0
end
redis.call('SET', KEYS[1], string.format('%d %s %s\n', version, hash, ARGV[2]) .. ARGV[3])
return 1
