-- The hold ceiling's capacity check, O(1) in the slot's live holds.
-- KEYS: seat total of the slot, its holds (sorted set scored by expiry), the hold's record.
-- ARGV: hold id, seats, capacity, ttl ms.
-- Holds met past their expiry are swept (a bounded number per call) and leave the total.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local total = tonumber(redis.call('GET', KEYS[1]) or '0')
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 16)) do
  total = total - tonumber(string.match(member, ':(%d+)$'))
  redis.call('ZREM', KEYS[2], member)
end
local seats = tonumber(ARGV[2])
if total + seats > tonumber(ARGV[3]) then
  redis.call('SET', KEYS[1], total)
  return {0, 0}
end
local ttl = tonumber(ARGV[4])
local expires = now + ttl
redis.call('SET', KEYS[1], total + seats, 'PX', ttl + 1000)
redis.call('ZADD', KEYS[2], expires, ARGV[1] .. ':' .. ARGV[2])
redis.call('PEXPIRE', KEYS[2], ttl + 1000)
redis.call('HSET', KEYS[3], 'seats', seats, 'expires', expires)
redis.call('PEXPIRE', KEYS[3], ttl + 1000)
return {1, expires}
