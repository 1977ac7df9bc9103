import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** A hold as Redis keeps it. Times are milliseconds since epoch, on Redis's clock. */
export interface Hold {
  id: string;
  tenantId: string;
  experienceId: string;
  slotId: string;
  seats: number;
  expiresAt: number;
  /** Set once the hold became a booking: it then reserves that booking's seats until expiry. */
  bookingId: string | null;
}

// Holds live in two places:
// - `holds:slot:<slotId>`: a sorted set of `<holdId>:<seats>` scored by expiry, which is what
//   capacity counts. Members past their score are dead, whatever Redis has swept yet.
// - `holds:<holdId>`: the hold's record, kept a day past expiry so that converting an expired
//   hold can answer 410 hold_expired rather than 404 hold_not_found.
// A hold that became a `held` booking stays in the set, shrunk to the booked guests: it keeps
// the booking's seats until it expires, and is removed when the booking is confirmed (its seats
// then count in slots.seats_booked) or cancelled.
// Scripts read the time from Redis so every API replica agrees on when a hold expires.
const NOW_MS = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

const SUM_LIVE = `
local function live_seats(key, now, except)
  local total = 0
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', key, '(' .. now, '+inf')) do
    local id, seats = string.match(member, '^(.*):(%d+)$')
    if id ~= except then total = total + tonumber(seats) end
  end
  return total
end
`;

// KEYS: slot set, hold record. ARGV: hold id, seats, seats available outside holds, ttl ms,
// record ttl s, tenant, experience, slot. A hold id that already has a record was placed by an
// earlier run of the same request (ids of retried requests are derived from their key): that
// hold is the answer, and nothing is added.
const PLACE = `${NOW_MS}${SUM_LIVE}
local existing = redis.call('HGET', KEYS[2], 'expires')
if existing then return {2, tonumber(existing)} end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local seats = tonumber(ARGV[2])
if live_seats(KEYS[1], now, '') + seats > tonumber(ARGV[3]) then return {0, 0} end
local expires = now + tonumber(ARGV[4])
redis.call('ZADD', KEYS[1], expires, ARGV[1] .. ':' .. ARGV[2])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[4]) then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]) + 1000) end
redis.call('HSET', KEYS[2], 'tenant', ARGV[6], 'experience', ARGV[7], 'slot', ARGV[8], 'seats', seats, 'expires', expires)
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[5]))
return {1, expires}
`;

// KEYS: slot sets. ARGV[1]: a hold id to leave out of the count (or '').
const COUNT = `${NOW_MS}${SUM_LIVE}
local totals = {}
for i, key in ipairs(KEYS) do totals[i] = live_seats(key, now, ARGV[1]) end
return totals
`;

// KEYS: slot set, hold record. ARGV: hold id, seats held, seats booked, booking id.
const CONVERT = `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1] .. ':' .. ARGV[2])
redis.call('HSET', KEYS[2], 'booking', ARGV[4], 'seats', ARGV[3])
if score then
  redis.call('ZREM', KEYS[1], ARGV[1] .. ':' .. ARGV[2])
  redis.call('ZADD', KEYS[1], score, ARGV[1] .. ':' .. ARGV[3])
end
return 1
`;

const RECORD_GRACE_SECONDS = 24 * 60 * 60;

const slotKey = (slotId: string) => `holds:slot:${slotId}`;
const holdKey = (holdId: string) => `holds:${holdId}`;

export class HoldStore {
  constructor(
    private readonly redis: Redis,
    private readonly ttlSeconds: number,
    private readonly logger?: Pick<Logger, 'warn'>,
  ) {}

  /**
   * Atomically adds a hold if the slot's live holds plus `seats` fit in `seatsAvailable` (capacity
   * less booked seats). Returns its expiry (`existed` when a hold with this id was already
   * placed, which then stays as it was), or null when the seats are not there.
   */
  async place(
    hold: Omit<Hold, 'expiresAt' | 'bookingId'>,
    seatsAvailable: number,
  ): Promise<{ expiresAt: number; existed: boolean } | null> {
    const [placed, expiresAt] = (await this.redis.eval(
      PLACE,
      2,
      slotKey(hold.slotId),
      holdKey(hold.id),
      hold.id,
      hold.seats,
      seatsAvailable,
      this.ttlSeconds * 1000,
      this.ttlSeconds + RECORD_GRACE_SECONDS,
      hold.tenantId,
      hold.experienceId,
      hold.slotId,
    )) as [number, number];
    return placed === 0 ? null : { expiresAt, existed: placed === 2 };
  }

  /** Seats held by live holds, per slot, optionally leaving one hold out. */
  async liveSeats(slotIds: string[], exceptHoldId = ''): Promise<Map<string, number>> {
    if (slotIds.length === 0) return new Map();
    const totals = (await this.redis.eval(COUNT, slotIds.length, ...slotIds.map(slotKey), exceptHoldId)) as number[];
    return new Map(slotIds.map((id, i) => [id, totals[i] ?? 0]));
  }

  async get(holdId: string): Promise<Hold | null> {
    const record = await this.redis.hgetall(holdKey(holdId));
    if (!record.slot) return null;
    return {
      id: holdId,
      tenantId: record.tenant!,
      experienceId: record.experience!,
      slotId: record.slot,
      seats: Number(record.seats),
      expiresAt: Number(record.expires),
      bookingId: record.booking ?? null,
    };
  }

  /** Redis's clock, the one hold expiry is measured on. */
  async now(): Promise<number> {
    const [seconds, micros] = await this.redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  /**
   * Marks a hold as used by a `held` booking (so it cannot be used again) and shrinks it to the
   * booked guests, handing the other seats back at once.
   */
  async convert(hold: Hold, bookingId: string, guestCount: number): Promise<void> {
    await this.redis.eval(
      CONVERT,
      2,
      slotKey(hold.slotId),
      holdKey(hold.id),
      hold.id,
      hold.seats,
      guestCount,
      bookingId,
    );
  }

  /** Stops a hold counting: its booking was confirmed (seats now in seats_booked) or cancelled. */
  async release(slotId: string, holdId: string, seats: number): Promise<void> {
    await this.redis.multi().zrem(slotKey(slotId), `${holdId}:${seats}`).del(holdKey(holdId)).exec();
  }

  /**
   * `release` for a change that has already committed (a cancellation, a refund): the change is
   * the truth and its answer must say so, so a Redis failure here is logged, not thrown. The
   * hold then stops counting when it expires (HOLD_TTL_SECONDS after it was placed at most).
   */
  async releaseAfterCommit(slotId: string, holdId: string, seats: number): Promise<void> {
    await this.release(slotId, holdId, seats).catch((error: unknown) => {
      this.logger?.warn({ err: error, holdId }, 'hold not released; it stops counting when it expires');
    });
  }
}
