import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { BOOKED, CONVERT, COUNT, PLACE, RELEASE } from './hold-scripts';

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

/** What a hold needs to know of its slot, read from PostgreSQL when Redis has no mirror of it. */
export interface SlotSnapshot {
  capacity: number;
  seatsBooked: number;
  experienceId: string;
  tenantId: string;
  startsAt: Date;
  minPartySize: number;
  maxPartySize: number;
}

export type PlaceOutcome =
  | { outcome: 'placed' | 'existed'; expiresAt: number }
  | { outcome: 'slot_not_found' | 'experience_mismatch' | 'started' | 'full' }
  | { outcome: 'party_size'; minPartySize: number; maxPartySize: number };

/**
 * How long a slot's mirror lives in Redis. Changes of booked seats reach it at once; other changes
 * of the slot, its experience or tenant made in PostgreSQL (capacity, publishing, party sizes)
 * reach holds within this time.
 */
export const SLOT_MIRROR_TTL_MS = 30_000;

const RECORD_GRACE_SECONDS = 24 * 60 * 60;

const slotKey = (slotId: string) => `holds:slot:${slotId}`;
const totalKey = (slotId: string) => `holds:slot:${slotId}:seats`;
const holdKey = (holdId: string) => `holds:${holdId}`;
const mirrorKey = (slotId: string) => `slots:${slotId}`;

type Script = (keys: string[], args: (string | number)[]) => Promise<unknown>;

/**
 * Registers a script with ioredis, which then runs it by its SHA (EVALSHA) and sends the source
 * only when the server does not know it yet (after a restart or a failover).
 */
function script(redis: Redis, name: string, lua: string): Script {
  if (!(name in redis)) redis.defineCommand(name, { lua });
  const run = (redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[name]!;
  return (keys, args) => run.call(redis, keys.length, ...keys, ...args);
}

export class HoldStore {
  private readonly scripts: Record<'place' | 'count' | 'convert' | 'release' | 'booked', Script>;

  constructor(
    private readonly redis: Redis,
    private readonly ttlSeconds: number,
    private readonly logger?: Pick<Logger, 'warn'>,
  ) {
    this.scripts = {
      place: script(redis, 'holdPlace', PLACE),
      count: script(redis, 'holdCount', COUNT),
      convert: script(redis, 'holdConvert', CONVERT),
      release: script(redis, 'holdRelease', RELEASE),
      booked: script(redis, 'holdBooked', BOOKED),
    };
  }

  /**
   * Atomically adds a hold if the slot's live holds plus its seats fit beside the slot's booked
   * seats, after checking the hold against the slot (experience, party size, start). Redis
   * answers from its mirror of the slot; when it has none, `readSlot` reads the slot from
   * PostgreSQL (null: no such open slot) and the mirror is filled on the way.
   */
  async place(
    hold: { id: string; experienceId: string; slotId: string; seats: number },
    readSlot: () => Promise<SlotSnapshot | null>,
  ): Promise<PlaceOutcome> {
    const keys = [slotKey(hold.slotId), totalKey(hold.slotId), holdKey(hold.id), mirrorKey(hold.slotId)];
    const args = [
      hold.id,
      hold.seats,
      this.ttlSeconds * 1000,
      this.ttlSeconds + RECORD_GRACE_SECONDS,
      hold.experienceId,
      hold.slotId,
      SLOT_MIRROR_TTL_MS,
    ];
    let answer = (await this.scripts.place(keys, args)) as number[];
    if (answer[0] === -1) {
      const slot = await readSlot();
      if (!slot) return { outcome: 'slot_not_found' };
      const snapshot = [
        slot.capacity,
        slot.seatsBooked,
        slot.experienceId,
        slot.tenantId,
        slot.startsAt.getTime(),
        slot.minPartySize,
        slot.maxPartySize,
      ];
      answer = (await this.scripts.place(keys, [...args, ...snapshot])) as number[];
    }
    const [code, a = 0, b = 0] = answer;
    switch (code) {
      case 1:
        return { outcome: 'placed', expiresAt: a };
      case 2:
        return { outcome: 'existed', expiresAt: a };
      case 0:
        return { outcome: 'full' };
      case -2:
        return { outcome: 'experience_mismatch' };
      case -3:
        return { outcome: 'party_size', minPartySize: a, maxPartySize: b };
      case -4:
        return { outcome: 'started' };
      default:
        // The mirror vanished between the snapshot and the script (it only ever does by expiry).
        return { outcome: 'slot_not_found' };
    }
  }

  /** Seats held by live holds, per slot, optionally leaving one hold out. */
  async liveSeats(slotIds: string[], exceptHoldId = ''): Promise<Map<string, number>> {
    if (slotIds.length === 0) return new Map();
    const keys = slotIds.flatMap((id) => [slotKey(id), totalKey(id)]);
    const totals = (await this.scripts.count(
      [...keys, holdKey(exceptHoldId || 'none')],
      [slotIds.length, exceptHoldId],
    )) as number[];
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
    await this.scripts.convert(
      [slotKey(hold.slotId), totalKey(hold.slotId), holdKey(hold.id)],
      [hold.id, hold.seats, guestCount, bookingId],
    );
  }

  /** Stops a hold counting: its booking was cancelled, or its hold is no longer wanted. */
  async release(slotId: string, holdId: string, seats: number): Promise<void> {
    await this.scripts.release([slotKey(slotId), totalKey(slotId), holdKey(holdId)], [holdId, seats]);
  }

  /**
   * The slot's seats_booked rose to `seatsBooked` (the caller holds the slot row lock and has
   * not committed yet); when the seats came from a hold, the hold stops counting in the same
   * step, so a hold placed meanwhile sees the seats in one place, never in both or neither.
   */
  async seatsBooked(slotId: string, seatsBooked: number, fromHold?: { id: string; seats: number }): Promise<void> {
    if (!fromHold) {
      await this.scripts.booked([mirrorKey(slotId)], [seatsBooked, SLOT_MIRROR_TTL_MS]);
      return;
    }
    await this.scripts.release(
      [slotKey(slotId), totalKey(slotId), holdKey(fromHold.id), mirrorKey(slotId)],
      [fromHold.id, fromHold.seats, seatsBooked, SLOT_MIRROR_TTL_MS],
    );
  }

  /**
   * Drops the slot's mirror: seats were freed (the caller holds the slot row lock and has not
   * committed yet). The next hold reads the slot again.
   */
  async forgetSlot(slotId: string): Promise<void> {
    await this.redis.del(mirrorKey(slotId));
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
