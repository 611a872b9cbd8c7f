-- Atomic, idempotent append of the outcomes of consecutive commands to one game.
-- Commands are applied in order; the first duplicate or version conflict stops the script,
-- because every later command was judged on a state that included the stopped one's effects, so
-- none of them may land.
-- KEYS: 1 log, 2 public, 3 command ids (hash: the audit entry id of each remembered command's
--       outcome), 4 audit (every outcome, in order), 5 archive marker (all with the game's
--       hash tag), then the streams that effects and acks name (standalone Redis only: they are in
--       other slots).
-- ARGV: 1 expected version, 2 number of commands, 3 seconds a reply stream written as an effect
--       lives after (0: for ever), 4 the prefix of reply streams, then per command:
--       command id, outcome record, remember (1: record the outcome under the id, 0: audit only),
--       n events, n private events, n public events ('' = withheld, '=' = the private one as is:
--       most events hide nothing, and every argument byte costs the script), public rejection
--       ('' = none),
--       bus notice: KEYS index of the shard's bus (0 = none), the notice (its entry also holds
--       every event of the command under a field named by its version, from the arguments above),
--       m effects, m pairs (KEYS index, data) XADDed once the command is applied,
--       ack: KEYS index of the intake stream (0 = none), group, entry id.
-- Returns one reply per command applied or stopping: {'ok', new version} | {'dup', prior outcome}
-- | {'conflict', actual version}
-- The version is the log's length: its entry ids are 1-0, 2-0, ... and it is never trimmed. XLEN
-- is O(1); XREVRANGE COUNT 1 cost ~3 us here, its entry copied into Lua. A user whose ACL file
-- predates +xlen (deploy/redis/users.acl) is refused it: the last entry's id says it then.
local v = redis.pcall('XLEN', KEYS[1])
if type(v) ~= 'number' then
  v = 0
  local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
  if #last > 0 then v = tonumber(string.match(last[1][1], '^(%d+)-')) end
end
-- An archived game has no log left, only its marker: nothing may be appended (a referee that
-- judged on an older copy reloads it and finds it archived).
if v == 0 and redis.call('EXISTS', KEYS[5]) == 1 then return {{'conflict', '-1'}} end

local expected = tonumber(ARGV[1])
local out = {}
local a = 5
local reply_ttl, reply_prefix = tonumber(ARGV[3]), ARGV[4]
local function take()
  a = a + 1
  return ARGV[a - 1]
end

for _ = 1, tonumber(ARGV[2]) do
  local command_id, outcome, remember, n = take(), take(), take(), tonumber(take())
  local events_at = a
  a = a + 2 * n
  local rejection = take()
  local bus, notice = tonumber(take()), take()
  local m = tonumber(take())
  local effects_at = a
  a = a + 2 * m
  local ack_key, ack_group, ack_id = tonumber(take()), take(), take()

  local at = redis.call('HGET', KEYS[3], command_id)
  if at then
    -- Written again as it is, so that this call is a write: a WAIT behind it on the same
    -- connection (DICESTREAM_APPEND_WAIT_REPLICAS) then also covers the first delivery's append,
    -- which is earlier in the replication stream, before the duplicate is answered.
    redis.call('HSET', KEYS[3], command_id, at)
    local prior = at
    if string.sub(at, 1, 1) ~= '{' then
      -- The id of the outcome's audit entry (before, the hash held the outcome itself).
      local entry = redis.call('XRANGE', KEYS[4], at, at)
      prior = entry[1][2][2]
    end
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
    local data = ARGV[events_at + i - 1]
    redis.call('XADD', KEYS[1], id, 'data', data)
    local pub = ARGV[events_at + n + i - 1]
    if pub == '=' then pub = data end
    if pub ~= '' then redis.call('XADD', KEYS[2], id, 'data', pub) end
  end
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
  -- The outcome is stored once, in the audit; the hash finds it by command id.
  local audited = redis.call('XADD', KEYS[4], '*', 'data', outcome)
  if remember == '1' then redis.call('HSET', KEYS[3], command_id, audited) end
  if bus > 0 then
    local fields = {'data', notice}
    for i = 1, n do
      fields[#fields + 1] = tostring(v + i)
      fields[#fields + 1] = ARGV[events_at + i - 1]
    end
    -- pcall, as for the effects below: the command is appended; its readers find it in the log.
    redis.pcall('XADD', KEYS[bus], '*', unpack(fields))
  end
  for j = 0, m - 1 do
    -- pcall: a client's reply stream of the wrong type must not abort a script that has written.
    local key = KEYS[tonumber(ARGV[effects_at + 2 * j])]
    redis.pcall('XADD', key, '*', 'data', ARGV[effects_at + 2 * j + 1])
    if reply_ttl > 0 and string.sub(key, 1, #reply_prefix) == reply_prefix then
      redis.pcall('EXPIRE', key, reply_ttl)
    end
  end
  if ack_key > 0 then redis.pcall('XACK', KEYS[ack_key], ack_group, ack_id) end
  v = v + n
  expected = v
  out[#out + 1] = {'ok', tostring(v)}
end
return out
