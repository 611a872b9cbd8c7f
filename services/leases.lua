-- One holder's lease tick: heartbeat, release, expire, renew, acquire; atomic per role.
-- KEYS: 1 holders (hash shard -> holder), 2 until (zset shard -> expiry ms),
--       3 members (zset holder -> expiry ms); all three in the role's hash slot.
-- ARGV: 1 holder (consumer name and a nonce: a restarted process is a new holder), 2 ttl ms, 3 shard count, 4 leaving (1: drop this holder from the
--       members after releasing), then the shards this holder has drained and releases now.
-- Returns {share, live members, held shard...} after the tick.
-- Time is the server's (TIME), so no holder's clock matters.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local me, ttl, total, leaving = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] == '1'

for i = 5, #ARGV do
  if redis.call('HGET', KEYS[1], ARGV[i]) == me then
    redis.call('HDEL', KEYS[1], ARGV[i])
    redis.call('ZREM', KEYS[2], ARGV[i])
  end
end
if leaving then
  redis.call('ZREM', KEYS[3], me)
  return {0, redis.call('ZCARD', KEYS[3])}
end

redis.call('ZADD', KEYS[3], now + ttl, me)
-- Members and leases that were not renewed in time are gone.
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
for _, shard in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
  redis.call('HDEL', KEYS[1], shard)
  redis.call('ZREM', KEYS[2], shard)
end
-- Fair shares that add up to the shard count: members sorted by holder name, the first
-- (total mod live) of them take one shard more than the others.
local members = redis.call('ZRANGE', KEYS[3], 0, -1)
table.sort(members)
local live = #members
local rank = 0
for i, m in ipairs(members) do
  if m == me then rank = i - 1 end
end
local share = math.floor(total / live)
if rank < total % live then share = share + 1 end

local holders = redis.call('HGETALL', KEYS[1])
local taken = {}
local held = {}
for i = 1, #holders, 2 do
  taken[holders[i]] = true
  if holders[i + 1] == me then held[#held + 1] = holders[i] end
end
-- Free shards, visited from a place that depends on the holder so that joiners spread out.
local start = tonumber(string.sub(redis.sha1hex(me), 1, 6), 16) % total
for k = 0, total - 1 do
  if #held >= share then break end
  local shard = tostring((start + k) % total)
  if not taken[shard] then
    redis.call('HSET', KEYS[1], shard, me)
    held[#held + 1] = shard
  end
end
for _, shard in ipairs(held) do redis.call('ZADD', KEYS[2], now + ttl, shard) end
local out = {share, live}
for _, shard in ipairs(held) do out[#out + 1] = shard end
return out
