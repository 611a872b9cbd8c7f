-- Atomic, idempotent append of one command's outcome to one game (all keys share a hash tag).
-- KEYS: 1 log, 2 public, 3 command outcomes (hash), 4 audit
-- ARGV: 1 expected version, 2 command id, 3 outcome record, 4 n events,
--       5..4+n private events, 5+n..4+2n public events ('' = withheld),
--       5+2n public rejection ('' = none)
-- Returns {'dup', prior outcome} | {'conflict', actual version} | {'ok', new version}
local prior = redis.call('HGET', KEYS[3], ARGV[2])
if prior then return {'dup', prior} end

local v = 0
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #last > 0 then v = tonumber(string.match(last[1][1], '^(%d+)-')) end
if v ~= tonumber(ARGV[1]) then return {'conflict', tostring(v)} end

local n = tonumber(ARGV[4])
for i = 1, n do
  -- Entry ids are the versions, so readers can range by version and a re-publish is refused.
  local id = tostring(v + i) .. '-0'
  redis.call('XADD', KEYS[1], id, 'data', ARGV[4 + i])
  local pub = ARGV[4 + n + i]
  if pub ~= '' then redis.call('XADD', KEYS[2], id, 'data', pub) end
end

local rejection = ARGV[5 + 2 * n]
if rejection ~= '' then
  -- Rejections do not move the version: they take sequence numbers after the event at v.
  local seq = 1
  local lp = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
  if #lp > 0 then
    local ms, s = string.match(lp[1][1], '^(%d+)-(%d+)$')
    if tonumber(ms) == v then seq = tonumber(s) + 1 end
  end
  redis.call('XADD', KEYS[2], tostring(v) .. '-' .. tostring(seq), 'data', rejection)
end

redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
redis.call('XADD', KEYS[4], '*', 'data', ARGV[3])
return {'ok', tostring(v + n)}
