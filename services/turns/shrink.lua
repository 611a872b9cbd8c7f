-- A finished game's seat streams, each written again as it is now, at its size. A stream keeps
-- trimmed entries in its node's bytes until the whole node goes, and a stream's last node is
-- allocated whole (stream-node-max-bytes, 4 KB): a seat stream holding only its GameOver cost
-- ~3-4.7 KB, ~0.8 KB once rewritten (its entries added again to an empty stream, then RESTORE
-- of its DUMP, which keeps the listpack at the bytes it holds). One script, so that no write falls
-- in between; entry ids and the TTL are kept.
-- KEYS: the seat streams of one game (one hash tag). Returns how many were rewritten.
local rewritten = 0
for _, key in ipairs(KEYS) do
  local entries = redis.call('XRANGE', key, '-', '+')
  if #entries > 0 then
    local ttl = redis.call('PTTL', key)
    redis.call('DEL', key)
    for _, entry in ipairs(entries) do
      redis.call('XADD', key, entry[1], unpack(entry[2]))
    end
    if ttl == 0 then ttl = 1 elseif ttl < 0 then ttl = 0 end
    redis.call('RESTORE', key, ttl, redis.call('DUMP', key), 'REPLACE')
    rewritten = rewritten + 1
  end
end
return rewritten
