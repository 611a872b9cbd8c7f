-- Atomic, idempotent append of the outcomes of consecutive commands to one game.
-- All keys share the game's hash tag. Commands are applied in order; the first duplicate or
-- version conflict stops the script, because every later command was judged on a state that
-- included the stopped one's effects, so none of them may land.
-- KEYS: 1 log, 2 public, 3 command outcomes (hash), 4 audit
-- ARGV: 1 expected version, 2 number of commands, then per command:
--       command id, outcome record, remember (1: record the outcome under the id, 0: audit only),
--       n events, n private events, n public events ('' = withheld), public rejection ('' = none)
-- Returns one reply per command applied or stopping: {'ok', new version} | {'dup', prior outcome}
-- | {'conflict', actual version}
local v = 0
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #last > 0 then v = tonumber(string.match(last[1][1], '^(%d+)-')) end

local expected = tonumber(ARGV[1])
local out = {}
local a = 3
for _ = 1, tonumber(ARGV[2]) do
  local command_id, outcome, remember, n = ARGV[a], ARGV[a + 1], ARGV[a + 2], tonumber(ARGV[a + 3])
  local prior = redis.call('HGET', KEYS[3], command_id)
  if prior then
    out[#out + 1] = {'dup', prior}
    return out
  end
  if v ~= expected then
    out[#out + 1] = {'conflict', tostring(v)}
    return out
  end
  for i = 1, n do
    -- Entry ids are the versions, so readers range by version and a re-publish is refused.
    local id = tostring(v + i) .. '-0'
    redis.call('XADD', KEYS[1], id, 'data', ARGV[a + 3 + i])
    local pub = ARGV[a + 3 + n + i]
    if pub ~= '' then redis.call('XADD', KEYS[2], id, 'data', pub) end
  end
  local rejection = ARGV[a + 4 + 2 * n]
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
  if remember == '1' then redis.call('HSET', KEYS[3], command_id, outcome) end
  redis.call('XADD', KEYS[4], '*', 'data', outcome)
  v = v + n
  expected = v
  out[#out + 1] = {'ok', tostring(v)}
  a = a + 5 + 2 * n
end
return out
