// The Redis side of seat holds. Per slot (key names as on a single Redis; on a Redis Cluster each
// carries the slot's hash tag, `holds:{<tag>}:slot:<slotId>` and so on, so that each script's keys
// live on one node: see holdKeys in hold-store.ts):
// - `holds:slot:<slotId>`: a sorted set of `<holdId>:<seats>` scored by expiry. Members past their
//   score are dead, whatever has been swept yet.
// - `holds:slot:<slotId>:seats`: the running total of the seats in that set, kept by every script
//   that adds, shrinks or removes a member. It is what capacity reads, so a check costs the same
//   with 0 or 50,000 live holds on the slot; expired members are swept (and taken off the total) as
//   they are met, so each hold is swept once over its life. A total that is missing (a key lost) is
//   counted again once from the set.
// - `slots:<slotId>`: the slot as a hold needs it (capacity, seats booked, experience, tenant,
//   start, party sizes), mirrored from PostgreSQL for SLOT_MIRROR_TTL so a hold makes no PostgreSQL
//   round trip. Every change of seats_booked writes the new figure here under the slot row's lock,
//   before its commit (booked-seats.ts); a snapshot read from PostgreSQL only fills fields that are
//   absent, so it never overwrites the newer figure of a change that committed after the read.
//   A change that frees seats empties the mirror instead (FORGET) and bumps its `gen` field, which
//   outlives the emptying: a snapshot read before that change is refused by its gen (see PLACE).
// - `holds:<holdId>`: the hold's record, kept a day past expiry so that converting an expired hold
//   can answer 410 hold_expired rather than 404 hold_not_found. A hold id begins with its slot's
//   tag, so on a cluster the record is found from the hold id alone. A released hold's record
//   keeps only its expiry (see RELEASE).
// A hold that became a `held` booking stays in the set, shrunk to the booked guests: it keeps the
// booking's seats until it expires, and is removed when the booking is confirmed (its seats then
// count in seats_booked) or cancelled.
// Scripts read the time from Redis so every API replica agrees on when a hold expires.

const NOW_MS = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

const HELD_SEATS = `
local function seats_of(member) return tonumber(string.match(member, ':(%d+)$')) end

-- The live seats of a slot's set, sweeping expired members off it and off the total.
local function held_seats(set, total, now)
  local held = redis.call('GET', total)
  local changed = false
  if held then
    held = tonumber(held)
  else
    held = 0
    for _, member in ipairs(redis.call('ZRANGE', set, 0, -1)) do held = held + seats_of(member) end
    changed = true
  end
  while true do
    local dead = redis.call('ZRANGEBYSCORE', set, '-inf', now, 'LIMIT', 0, 500)
    if #dead == 0 then break end
    for _, member in ipairs(dead) do held = held - seats_of(member) end
    redis.call('ZREM', set, unpack(dead))
    changed = true
  end
  return held, changed
end

-- The total lives exactly as long as its set.
local function store_total(set, total, held)
  local ttl = redis.call('PTTL', set)
  if ttl > 0 then redis.call('SET', total, held, 'PX', ttl) else redis.call('DEL', total) end
end
`;

const SET_BOOKED = `
local function set_booked(mirror, booked, ttl)
  redis.call('HSET', mirror, 'booked', booked)
  if redis.call('PTTL', mirror) < 0 then redis.call('PEXPIRE', mirror, ttl) end
end
`;

/** The mirrored slot's fields, in the order PLACE takes a snapshot of them. */
export const SLOT_FIELDS = ['capacity', 'booked', 'experience', 'tenant', 'starts', 'min', 'max'] as const;

const MIRROR_FIELDS = `local fields = {${SLOT_FIELDS.map((field) => `'${field}'`).join(', ')}}
`;

// KEYS: set, total, record, slot mirror. ARGV: hold id, seats, ttl ms, record ttl s, experience
// id, slot id, mirror ttl ms, then optionally a snapshot of the slot (SLOT_FIELDS) read from
// PostgreSQL and the mirror's gen the {-1} answer gave before that read ('*': take it anyway).
// A hold id that already has a record was placed by an earlier run of the same request (ids of
// retried requests are derived from their key): that hold is the answer, and nothing is added.
// A snapshot is taken only if no change freed seats since its read began (the gen is the same):
// one that did may have committed after the read, and the figure read would then count seats as
// booked that are free, refusing holds until the mirror expires.
// Answers: {1, expires} placed; {2, expires} placed before; {0} no room; {-1, gen} no mirror, or
// seats freed since the read (read the slot and call again with it); {-2} other experience;
// {-3, min, max} party size; {-4} started.
export const PLACE = `${NOW_MS}${HELD_SEATS}${MIRROR_FIELDS}
local existing = redis.call('HGET', KEYS[3], 'expires')
if existing then return {2, tonumber(existing)} end
local function gen() return redis.call('HGET', KEYS[4], 'gen') or '0' end
if ARGV[8] then
  if ARGV[15] ~= '*' and ARGV[15] ~= gen() then return {-1, gen()} end
  for i, field in ipairs(fields) do redis.call('HSETNX', KEYS[4], field, ARGV[7 + i]) end
  if redis.call('PTTL', KEYS[4]) < 0 then redis.call('PEXPIRE', KEYS[4], tonumber(ARGV[7])) end
end
local slot = redis.call('HMGET', KEYS[4], unpack(fields))
if not slot[1] then return {-1, gen()} end
if slot[3] ~= ARGV[5] then return {-2} end
local seats = tonumber(ARGV[2])
local min, max = tonumber(slot[6]), tonumber(slot[7])
if seats < min or seats > max then return {-3, min, max} end
if tonumber(slot[5]) <= now then return {-4} end
local held = held_seats(KEYS[1], KEYS[2], now)
if held + seats + tonumber(slot[2]) > tonumber(slot[1]) then
  store_total(KEYS[1], KEYS[2], held)
  return {0}
end
local ttl = tonumber(ARGV[3])
local expires = now + ttl
redis.call('ZADD', KEYS[1], expires, ARGV[1] .. ':' .. seats)
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl + 1000) end
store_total(KEYS[1], KEYS[2], held + seats)
redis.call('HSET', KEYS[3], 'tenant', slot[4], 'experience', ARGV[5], 'slot', ARGV[6], 'seats', seats, 'expires', expires)
redis.call('EXPIRE', KEYS[3], tonumber(ARGV[4]))
return {1, expires}
`;

// The live seats of a slot's set but those of the hold whose record is `record` and id `hold_id`
// ('' to leave none out), and that hold's expiry when it is live (false otherwise).
const OTHER_HELD_SEATS = `${HELD_SEATS}
local function other_held_seats(set, total, record, hold_id, now)
  local held, changed = held_seats(set, total, now)
  if changed then store_total(set, total, held) end
  local expires = false
  if hold_id ~= '' then
    local seats = redis.call('HGET', record, 'seats')
    -- Every member left in the set is live.
    expires = seats and redis.call('ZSCORE', set, hold_id .. ':' .. seats)
    if expires then held = held - tonumber(seats) end
  end
  return held, expires
end
`;

// KEYS: set and total of a slot, and the record of a hold of that slot to leave out. ARGV: the id
// of that hold, or '' to leave none out.
export const COUNT = `${NOW_MS}${OTHER_HELD_SEATS}
local held = other_held_seats(KEYS[1], KEYS[2], KEYS[3], ARGV[1], now)
return held
`;

// Seats about to enter seats_booked (a payment or cash, guests added, a booking moved here),
// checked and counted in one step: the caller holds the slot row lock and read seats_booked under
// it. If the seats fit beside the other live holds, the mirror's booked figure rises to include
// them at once, so a hold placed before the commit counts them; should the commit fail, the
// mirror shows seats that are not booked until it expires (holds refused early, never seats sold
// twice). Seats the left-out hold still keeps (a payment inside its time) are only checked: they
// enter the booked figure as they leave the hold, in one step (RELEASE). Unless the hold ends
// within the mirror's ttl (ARGV[5], 30 s, beyond the default transaction timeout): then they are
// counted here as well, for that short while twice rather than, once it expired, nowhere.
// KEYS: set, total, record of the hold to leave out, slot mirror. ARGV: that hold's id or '',
// seats, seats_booked as locked, capacity, mirror ttl ms. Answers 1 (fits) or 0.
export const RESERVE = `${NOW_MS}${OTHER_HELD_SEATS}${SET_BOOKED}
local held, expires = other_held_seats(KEYS[1], KEYS[2], KEYS[3], ARGV[1], now)
local booked = tonumber(ARGV[3]) + tonumber(ARGV[2])
if booked + held > tonumber(ARGV[4]) then return 0 end
if expires and tonumber(expires) > now + tonumber(ARGV[5]) then return 1 end
set_booked(KEYS[4], booked, tonumber(ARGV[5]))
return 1
`;

// KEYS: a hold's record. Answers {now, {field, value, ...}} (an empty list: no record): the record
// and the time on the clock of the node that keeps it, which set its expiry. On a cluster another
// node's clock is off by its skew.
export const READ = `${NOW_MS}
return {now, redis.call('HGETALL', KEYS[1])}
`;

// KEYS: set, total, record. ARGV: hold id, seats held, seats booked, booking id.
export const CONVERT = `
redis.call('HSET', KEYS[3], 'booking', ARGV[4], 'seats', ARGV[3])
local score = redis.call('ZSCORE', KEYS[1], ARGV[1] .. ':' .. ARGV[2])
if score then
  redis.call('ZREM', KEYS[1], ARGV[1] .. ':' .. ARGV[2])
  redis.call('ZADD', KEYS[1], score, ARGV[1] .. ':' .. ARGV[3])
  if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('DECRBY', KEYS[2], tonumber(ARGV[2]) - tonumber(ARGV[3])) end
end
return 1
`;

// READ and COUNT in one step, for a booking: the hold it names and the seats of the slot's other
// live holds. KEYS: set and total of a slot, and the record of a hold of that slot. ARGV: the
// hold's id. Answers {now, {field, value, ...}, seats of the other live holds}.
export const READ_FOR_BOOKING = `${NOW_MS}${OTHER_HELD_SEATS}
local held = other_held_seats(KEYS[1], KEYS[2], KEYS[3], ARGV[1], now)
return {now, redis.call('HGETALL', KEYS[3]), held}
`;

// KEYS: set, total, record, slot mirror. ARGV: hold id, seats, then the slot's new seats_booked
// and the mirror ttl ms when the seats went into seats_booked (the mirror is left alone otherwise).
export const RELEASE = `${SET_BOOKED}
if redis.call('ZREM', KEYS[1], ARGV[1] .. ':' .. ARGV[2]) == 1 and redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('DECRBY', KEYS[2], tonumber(ARGV[2]))
end
-- The record keeps its expiry until it lapses, and nothing else: no booking can use the hold, and
-- a retry of the request that placed it (its id is derived from the Idempotency-Key) finds it
-- placed, rather than placing it again.
redis.call('HDEL', KEYS[3], 'tenant', 'experience', 'slot', 'seats', 'booking')
if ARGV[3] then set_booked(KEYS[4], ARGV[3], tonumber(ARGV[4])) end
return 1
`;

// KEYS: slot mirror. ARGV: the slot's new seats_booked, mirror ttl ms.
export const BOOKED = `${SET_BOOKED}
set_booked(KEYS[1], ARGV[1], tonumber(ARGV[2]))
return 1
`;

// Seats were freed (the caller holds the slot row lock and has not committed): the mirror's fields
// go, so the next hold reads the slot again, and its gen goes up, so a read that began before
// this change cannot fill the mirror with the figure it read. KEYS: slot mirror. ARGV: mirror ttl
// ms.
export const FORGET = `${MIRROR_FIELDS}
redis.call('HDEL', KEYS[1], unpack(fields))
redis.call('HINCRBY', KEYS[1], 'gen', 1)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
return 1
`;
