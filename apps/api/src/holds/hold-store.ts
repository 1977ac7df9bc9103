import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { redisScript, type RedisScript } from '@booking/db';
import type { Logger } from 'pino';
import { BOOKED, CONVERT, COUNT, FORGET, PLACE, READ, READ_FOR_BOOKING, RELEASE, RESERVE } from './hold-scripts';

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

/**
 * How long a hold's record outlives the hold (a day): converting an expired hold then answers 410
 * hold_expired rather than 404, and a retried hold request finds the hold it placed (see
 * idempotency's rebuildsAnswers) for at least as long.
 */
export const HOLD_RECORD_GRACE_SECONDS = 24 * 60 * 60;

/**
 * Reads of the slot a hold makes before it takes its snapshot as it is: each read that a change
 * freeing seats overtook is made again, and such changes are rare, so the last read is as good
 * as any and only bounds the loop (its figure errs on the side of booked seats).
 */
const SNAPSHOT_READS = 3;

/**
 * The hash tag of a slot's keys and of its holds' records: 4 hex digits of a hash of the slot id.
 * A script runs on one node of a Redis Cluster, so all the keys it touches must share a tag; the
 * tag is short so that a hold id can carry it (see holdIdOn), and the record of a hold is found
 * from the hold id alone, as bookings and releases name it. 65,536 tags spread slots evenly over
 * the cluster's 16,384 hash slots.
 */
export function slotTag(slotId: string): string {
  return createHash('sha1').update(slotId).digest('hex').slice(0, 4);
}

/** A hold id (a version-4 shaped uuid, `id`) made to begin with its slot's tag. */
export function holdIdOn(slotId: string, id: string): string {
  return `${slotTag(slotId)}${id.slice(4)}`;
}

/** Where a slot's hold data lives in Redis (hold-scripts.ts says what each key holds). */
export interface HoldKeys {
  slot(slotId: string): { set: string; total: string; mirror: string; record(holdId: string): string };
  /** A hold's record found from its id alone (bookings and releases name a hold by id). */
  record(holdId: string): string;
}

/**
 * On a single Redis, the names the hold keys have always had, so that replicas of the version
 * before Redis Cluster support and of this one share live holds during a rolling upgrade. On a
 * cluster (a new deployment: holds do not move from one Redis to another), every key under the
 * slot's tag; a record is looked for under the tag its hold id begins with. A record named with
 * its slot is under the slot's tag, so a hold id that does not begin with it (not a hold of this
 * slot) names no record there and the script's keys still share one tag.
 */
export function holdKeys(clustered: boolean): HoldKeys {
  const tagged = (tag: () => string) => (clustered ? `{${tag()}}:` : '');
  return {
    slot(slotId) {
      const at = tagged(() => slotTag(slotId));
      return {
        set: `holds:${at}slot:${slotId}`,
        total: `holds:${at}slot:${slotId}:seats`,
        mirror: `slots:${at}${slotId}`,
        record: (holdId) => `holds:${at}${holdId}`,
      };
    },
    record: (holdId) => `holds:${tagged(() => holdId.slice(0, 4))}${holdId}`,
  };
}

export class HoldStore {
  private readonly scripts: Record<
    'place' | 'count' | 'reserve' | 'read' | 'readForBooking' | 'convert' | 'release' | 'booked' | 'forget',
    RedisScript
  >;
  private readonly keys: HoldKeys;

  constructor(
    private readonly redis: Redis | Cluster,
    private readonly ttlSeconds: number,
    private readonly logger?: Pick<Logger, 'warn'>,
  ) {
    this.keys = holdKeys(redis.isCluster);
    this.scripts = {
      place: redisScript(redis, 'holdPlace', PLACE, 4),
      count: redisScript(redis, 'holdCount', COUNT, 3),
      reserve: redisScript(redis, 'holdReserve', RESERVE, 4),
      read: redisScript(redis, 'holdRead', READ, 1),
      readForBooking: redisScript(redis, 'holdReadForBooking', READ_FOR_BOOKING, 3),
      convert: redisScript(redis, 'holdConvert', CONVERT, 3),
      release: redisScript(redis, 'holdRelease', RELEASE, 4),
      booked: redisScript(redis, 'holdBooked', BOOKED, 1),
      forget: redisScript(redis, 'holdForget', FORGET, 1),
    };
  }

  /** The keys of a slot and of a hold on it, in the order the scripts take them. */
  private slotKeys(slotId: string, holdId: string): [set: string, total: string, record: string, mirror: string] {
    const slot = this.keys.slot(slotId);
    return [slot.set, slot.total, slot.record(holdId), slot.mirror];
  }

  /**
   * Atomically adds a hold if the slot's live holds plus its seats fit beside the slot's booked
   * seats, after checking the hold against the slot (experience, party size, start). Redis
   * answers from its mirror of the slot; when it has none, `readSlot` reads the slot from
   * PostgreSQL (null: no such open slot) and the mirror is filled on the way, unless seats were
   * freed since the read began: then the slot is read again (SNAPSHOT_READS). The hold id must
   * begin with the slot's tag (holdIdOn).
   */
  async place(
    hold: { id: string; experienceId: string; slotId: string; seats: number },
    readSlot: () => Promise<SlotSnapshot | null>,
  ): Promise<PlaceOutcome> {
    const keys = this.slotKeys(hold.slotId, hold.id);
    const args = [
      hold.id,
      hold.seats,
      this.ttlSeconds * 1000,
      this.ttlSeconds + HOLD_RECORD_GRACE_SECONDS,
      hold.experienceId,
      hold.slotId,
      SLOT_MIRROR_TTL_MS,
    ];
    let answer = (await this.scripts.place(keys, args)) as (number | string)[];
    for (let reads = 1; answer[0] === -1 && reads <= SNAPSHOT_READS; reads++) {
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
        reads < SNAPSHOT_READS ? String(answer[1]) : '*',
      ];
      answer = (await this.scripts.place(keys, [...args, ...snapshot])) as (number | string)[];
    }
    const [code, a = 0, b = 0] = answer as number[];
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
        // Not answered: the last snapshot is taken whatever its gen, and fills the mirror.
        return { outcome: 'slot_not_found' };
    }
  }

  /**
   * Seats held by live holds, per slot, optionally leaving one hold out. One script per slot (a
   * script's keys must share the slot's tag on a cluster), sent together.
   */
  async liveSeats(slotIds: string[], exceptHoldId = ''): Promise<Map<string, number>> {
    const totals = await Promise.all(
      slotIds.map((slotId) => {
        return this.scripts.count(this.slotKeys(slotId, exceptHoldId).slice(0, 3), [exceptHoldId]);
      }),
    );
    return new Map(slotIds.map((id, i) => [id, Number(totals[i] ?? 0)]));
  }

  /**
   * Whether `seats` no live hold kept fit the slot beside its `seatsBooked` (read under the slot
   * row lock the caller holds) and every live hold but `exceptHoldId`; if so the mirror counts
   * them as booked from now on (see RESERVE), before the caller writes and commits them.
   */
  async reserveSeats(
    slot: { id: string; seatsBooked: number; capacity: number },
    seats: number,
    exceptHoldId = '',
  ): Promise<boolean> {
    const fits = await this.scripts.reserve(this.slotKeys(slot.id, exceptHoldId), [
      exceptHoldId,
      seats,
      slot.seatsBooked,
      slot.capacity,
      SLOT_MIRROR_TTL_MS,
    ]);
    return Number(fits) === 1;
  }

  /**
   * A hold (null: none, or its record is gone) and the time on the clock its expiry is measured
   * by, read together on the node that keeps it: the hold is live while `now < hold.expiresAt`.
   */
  async read(holdId: string): Promise<{ hold: Hold | null; now: number }> {
    const [now, fields] = (await this.scripts.read([this.keys.record(holdId)], [])) as [number, string[]];
    return { hold: holdOf(holdId, fields), now };
  }

  /**
   * What a booking of `slotId` reads in one step: the hold as `read` finds it, and the seats of
   * the slot's other live holds (`liveSeats` leaving the hold out). On a cluster the record of a
   * hold of another slot is under that slot's tag, out of this script's reach: it is then read
   * where it is, so that the booking learns it is another slot's hold rather than none.
   */
  async readForBooking(
    slotId: string,
    holdId: string,
  ): Promise<{ hold: Hold | null; now: number; otherSeats: number }> {
    const [now, fields, otherSeats] = (await this.scripts.readForBooking(this.slotKeys(slotId, holdId).slice(0, 3), [
      holdId,
    ])) as [number, string[], number];
    const hold = holdOf(holdId, fields);
    if (!hold && this.redis.isCluster && !holdId.startsWith(slotTag(slotId))) {
      const [found, others] = await Promise.all([this.read(holdId), this.liveSeats([slotId], holdId)]);
      return { ...found, otherSeats: others.get(slotId) ?? 0 };
    }
    return { hold, now, otherSeats: Number(otherSeats) };
  }

  /**
   * Marks a hold as used by a `held` booking (so it cannot be used again) and shrinks it to the
   * booked guests, handing the other seats back at once.
   */
  async convert(hold: Hold, bookingId: string, guestCount: number): Promise<void> {
    await this.scripts.convert(this.slotKeys(hold.slotId, hold.id).slice(0, 3), [
      hold.id,
      hold.seats,
      guestCount,
      bookingId,
    ]);
  }

  /** Stops a hold counting: its booking was cancelled, or its hold is no longer wanted. */
  async release(slotId: string, holdId: string, seats: number): Promise<void> {
    await this.scripts.release(this.slotKeys(slotId, holdId), [holdId, seats]);
  }

  /**
   * The slot's seats_booked rose to `seatsBooked` (the caller holds the slot row lock and has
   * not committed yet); when the seats came from a hold, the hold stops counting in the same
   * step, so a hold placed meanwhile sees the seats in one place, never in both or neither.
   */
  async seatsBooked(slotId: string, seatsBooked: number, fromHold?: { id: string; seats: number }): Promise<void> {
    if (!fromHold) {
      await this.scripts.booked([this.keys.slot(slotId).mirror], [seatsBooked, SLOT_MIRROR_TTL_MS]);
      return;
    }
    await this.scripts.release(this.slotKeys(slotId, fromHold.id), [
      fromHold.id,
      fromHold.seats,
      seatsBooked,
      SLOT_MIRROR_TTL_MS,
    ]);
  }

  /**
   * Drops the slot's mirror: seats were freed (the caller holds the slot row lock and has not
   * committed yet). The next hold reads the slot again, and a hold whose read began before this
   * reads it again too (FORGET).
   */
  async forgetSlot(slotId: string): Promise<void> {
    await this.scripts.forget([this.keys.slot(slotId).mirror], [SLOT_MIRROR_TTL_MS]);
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

/** A hold from its record's fields as HGETALL lists them; null when the record is gone. */
function holdOf(holdId: string, fields: string[]): Hold | null {
  const record = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) record.set(fields[i]!, fields[i + 1]!);
  const slotId = record.get('slot');
  if (!slotId) return null;
  return {
    id: holdId,
    tenantId: record.get('tenant')!,
    experienceId: record.get('experience')!,
    slotId,
    seats: Number(record.get('seats')),
    expiresAt: Number(record.get('expires')),
    bookingId: record.get('booking') ?? null,
  };
}
