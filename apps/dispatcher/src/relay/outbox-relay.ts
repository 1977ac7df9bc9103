import type { DeliveryQueue } from '@booking/webhook-queue';
import type { Logger } from 'pino';
import type { Pool } from 'pg';
import { RELAY_BATCH_SIZE, relayOutbox } from './relay-outbox';

/** Full batches after which a batch size halved by a timeout is doubled again. */
const GROW_AFTER = 100;

/**
 * Batches relayed at a time, each a statement on its own connection: SKIP LOCKED gives them
 * disjoint events, so a burst is claimed by two PostgreSQL backends in parallel rather than one
 * batch after another (a burst's second batch would otherwise wait for its first).
 */
const RELAY_LANES = 2;

/**
 * After a drain failed (PostgreSQL unreachable, say), polls are skipped for this long: an outage
 * logs its failure about once a second, not once per poll.
 */
const PAUSE_AFTER_FAILURE_MS = 1_000;

/**
 * A drain reads only events created at most this long before the start of the last drain that
 * ended well (by PostgreSQL's clock), or twice the longest a transaction may run if that is more
 * (lateCommitFor): an event that was not yet committed then was created by a transaction still
 * running then, and those end within DB_TRANSACTION_TIMEOUT_MS or, for one statement,
 * DB_STATEMENT_TIMEOUT_MS (at the defaults, no transaction of the apps is given more than 30 s).
 * The rest is clock skew: Prisma fills created_at from the API's clock. Why a drain is bounded at
 * all: the index the relay reads holds an entry for every event relayed since the last VACUUM of
 * the table, before the waiting ones; autovacuum runs when a fifth of the table is dead, so on a
 * table of millions of events every poll would step over hundreds of thousands of entries
 * (docs/operations.md has the figures).
 */
export const LATE_COMMIT_MS = 60_000;

/** The late-commit margin when transactions may run `longestTransactionMs`. */
export function lateCommitFor(longestTransactionMs: number): number {
  return Math.max(LATE_COMMIT_MS, 2 * longestTransactionMs);
}

/**
 * Every this often a drain reads the whole outbox, unbounded: an event whose transaction ran
 * past the margin, or that another dispatcher claimed and then rolled back after this one
 * passed it, is relayed at most this late.
 */
export const FULL_DRAIN_EVERY_MS = 60_000;

/**
 * Runs the relay: every `intervalMs` it drains the outbox batch by batch (a burst in full batches,
 * back to back). It polls rather than LISTENs: a NOTIFY from each event-writing transaction would
 * serialise their commits across the cluster (see recordEvent), and a poll that finds nothing is
 * an index lookup per lane. Returns a stop function.
 */
export function startOutboxRelay(deps: {
  sql: Pool;
  queue: DeliveryQueue;
  retryDelaysMs: number[];
  intervalMs: number;
  logger: Logger;
  /** See LATE_COMMIT_MS (its default). */
  lateCommitMs?: number;
  /** FULL_DRAIN_EVERY_MS, unless given (tests). */
  fullDrainEveryMs?: number;
}): () => Promise<void> {
  const { lateCommitMs = LATE_COMMIT_MS, fullDrainEveryMs = FULL_DRAIN_EVERY_MS } = deps;
  let stopped = false;
  let running: Promise<void> | null = null;
  let again = false;
  // Events per statement. A batch writes a delivery per event and endpoint that wants it, so a
  // tenant with many endpoints can make a full batch too big for the statement timeout: the same
  // oldest events would then be claimed and rolled back for good. The size halves after such a
  // batch (down to one event), and doubles back every GROW_AFTER full batches after that (in any
  // lane or drain), so a size that times out is tried again only now and then.
  let batchSize = RELAY_BATCH_SIZE;
  let fullInARow = 0;
  // The bound of the next drain (the start of the last drain, which ended well, by PostgreSQL's
  // clock, less lateCommitMs), and when the last unbounded drain started (performance.now()). The
  // first drain reads everything, and so does the next one after a drain that failed.
  let boundFrom: number | null = null;
  let lastFullDrainAt = 0;

  const drain = async () => {
    // When the drain's first statement started, by PostgreSQL's clock: every event committed
    // before is visible to it.
    let startedAt = Infinity;
    const full = boundFrom === null || performance.now() - lastFullDrainAt >= fullDrainEveryMs;
    if (full) lastFullDrainAt = performance.now();
    const createdFrom = full ? null : new Date(boundFrom!);
    // Each batch's jobs are queued while the next batch is relayed; the drain ends once all are.
    // A batch whose jobs could not be queued (Redis down or full) is logged at once, never left
    // as an unhandled rejection: its deliveries are committed, and the sweeper queues them later.
    let queued: Promise<unknown> = Promise.resolve();
    // A lane relays batch after batch until one comes back short: the outbox is empty, or the
    // rest is locked by the other lane (or another dispatcher), which relays it. Rows committed
    // meanwhile, and rows skipped because a relay that held them failed and rolled back, wait for
    // the next poll.
    const lane = async () => {
      while (!stopped) {
        const size = batchSize;
        let batch;
        try {
          batch = await relayOutbox(deps.sql, deps.queue, deps.retryDelaysMs, size, createdFrom);
          startedAt = Math.min(startedAt, batch.startedAt.getTime());
        } catch (error) {
          // Bounded: the size halves each time, and a batch of one event that still runs out of time is thrown.
          if ((error as { code?: unknown }).code !== '57014' || size === 1) throw error;
          batchSize = Math.min(batchSize, Math.ceil(size / 2));
          fullInARow = 0;
          deps.logger.warn({ batchSize }, 'an outbox batch ran past the statement timeout; relaying smaller batches');
          continue;
        }
        const logged = batch.queued.catch((error: unknown) =>
          deps.logger.error({ err: error }, 'relayed deliveries not queued; the sweeper will queue them'),
        );
        queued = Promise.all([queued, logged]);
        if (batch.relayed < size) break;
        fullInARow += 1;
        if (fullInARow >= GROW_AFTER && batchSize < RELAY_BATCH_SIZE) {
          batchSize = Math.min(RELAY_BATCH_SIZE, batchSize * 2);
          fullInARow = 0;
        }
      }
    };
    try {
      // Every lane ends before the drain does, even when one fails: stop() waits for the drain.
      const lanes = await Promise.allSettled(Array.from({ length: RELAY_LANES }, lane));
      const failures = lanes.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
      if (failures.length > 0) boundFrom = null;
      if (failures.length > 1) throw new AggregateError(failures, `${failures.length} outbox relay lanes failed`);
      if (failures.length === 1) throw failures[0];
      // Every event committed before this drain started is relayed, or held by another
      // dispatcher's relay. (A drain stopped before its first statement leaves the bound.)
      if (Number.isFinite(startedAt)) boundFrom = startedAt - lateCommitMs;
    } finally {
      await queued;
    }
  };
  let pausedUntil = 0; // performance.now(): a clock set back must not lengthen a pause
  // One drain at a time; a poll during a drain runs one more after it.
  const wake = () => {
    if (running) {
      again = true;
      return;
    }
    if (performance.now() < pausedUntil) return;
    running = drain()
      .catch((error: unknown) => {
        pausedUntil = performance.now() + PAUSE_AFTER_FAILURE_MS;
        deps.logger.error({ err: error }, 'outbox relay failed; will retry');
      })
      .finally(() => {
        running = null;
        if (again && !stopped) {
          again = false;
          wake();
        }
      });
  };

  const timer = setInterval(wake, deps.intervalMs);
  wake();

  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}
