-- Replace a finished game's keys by its archive marker, atomically, unless the game changed since
-- it was exported (a late refusal appends to the audit and the public stream).
-- KEYS: 1 log, 2 audit, 3 the marker's key, then every other key of the game to delete (public,
--       cmds, seat streams).
-- ARGV: 1 the log's last version as exported, 2 the audit's length as exported, 3 the marker (an
--       encoded lifecycle.GameArchived envelope, at the version after the last event).
-- Returns {'ok'} | {'moved', last version} | {'gone'}
if redis.call('EXISTS', KEYS[3]) == 1 then return {'ok'} end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #last == 0 then return {'gone'} end
local v = tonumber(string.match(last[1][1], '^(%d+)-'))
if v ~= tonumber(ARGV[1]) or redis.call('XLEN', KEYS[2]) ~= tonumber(ARGV[2]) then
  return {'moved', tostring(v)}
end
-- A string, not a one-entry stream (a stream's first node alone takes about 4.7 KB). Readers of
-- the log find it there instead (RedisEventStore.read_many); the append script refuses to write
-- next to it.
redis.call('SET', KEYS[3], ARGV[3])
redis.call('UNLINK', KEYS[1], KEYS[2])
for i = 4, #KEYS do redis.call('UNLINK', KEYS[i]) end
return {'ok'}
