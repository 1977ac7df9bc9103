import { OUTBOX_CHANNEL } from '@booking/events';
import type { DeliveryQueue } from '@booking/webhook-queue';
import type { Logger } from 'pino';
import { Client, type Pool } from 'pg';
import { RELAY_BATCH_SIZE, relayOutbox } from './relay-outbox';

const LISTEN_RETRY_MS = 5_000;

/** Full batches after which a batch size halved by a timeout is doubled again. */
const GROW_AFTER = 100;

/**
 * Batches relayed at a time, each a statement on its own connection: SKIP LOCKED gives them
 * disjoint events, so a burst is claimed by two PostgreSQL backends in parallel rather than one
 * batch after another.
 */
const RELAY_LANES = 2;

/**
 * Runs the relay: wakes on PostgreSQL notifications from committed events (low latency) and on
 * a timer (in case a notification was missed or the listener was reconnecting), and drains the
 * outbox batch by batch. Returns a stop function.
 */
export async function startOutboxRelay(deps: {
  sql: Pool;
  queue: DeliveryQueue;
  databaseUrl: string;
  retryDelaysMs: number[];
  intervalMs: number;
  logger: Logger;
}): Promise<() => Promise<void>> {
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

  const drain = async () => {
    // Each batch's jobs are queued while the next batch is relayed; the drain ends once all are.
    // A batch whose jobs could not be queued (Redis down or full) is logged at once, never left
    // as an unhandled rejection: its deliveries are committed, and the sweeper queues them later.
    let queued: Promise<unknown> = Promise.resolve();
    // A lane relays batch after batch until one comes back short: the outbox is empty, or the
    // rest is locked by the other lane (or another dispatcher), which relays it. Rows committed
    // meanwhile wake the relay again (their NOTIFY); rows skipped because a relay that held them
    // failed and rolled back wait for the next wake-up or poll, as they did with one lane.
    const lane = async () => {
      while (!stopped) {
        const size = batchSize;
        let batch;
        try {
          batch = await relayOutbox(deps.sql, deps.queue, deps.retryDelaysMs, size);
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
      // Both lanes end before the drain does, even when one fails: stop() waits for the drain.
      const lanes = await Promise.allSettled(Array.from({ length: RELAY_LANES }, lane));
      const failed = lanes.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
    } finally {
      await queued;
    }
  };
  // One drain at a time; a wake-up during a drain runs one more after it.
  const wake = () => {
    if (running) {
      again = true;
      return;
    }
    running = drain()
      .catch((error: unknown) => deps.logger.error({ err: error }, 'outbox relay failed; will retry'))
      .finally(() => {
        running = null;
        if (again && !stopped) {
          again = false;
          wake();
        }
      });
  };

  // The LISTEN connection: after it drops (a database restart, a failover), the relay polls
  // and reconnects in the background, so low latency comes back without a restart.
  let listener: Client | null = null;
  let reconnectTimer: NodeJS.Timeout | undefined;
  const listen = async (): Promise<void> => {
    const client = new Client({ connectionString: deps.databaseUrl });
    client.on('notification', wake);
    client.on('error', (error) => {
      deps.logger.warn({ err: error }, 'outbox listener connection lost; polling until it is back');
      client.end().catch(() => undefined);
      if (listener === client) listener = null;
      if (!stopped) reconnectTimer = setTimeout(reconnect, LISTEN_RETRY_MS);
    });
    await client.connect();
    await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
    listener = client;
  };
  const reconnect = () => {
    listen()
      .then(wake)
      .catch(() => {
        if (!stopped) reconnectTimer = setTimeout(reconnect, LISTEN_RETRY_MS);
      });
  };
  await listen();

  const timer = setInterval(wake, deps.intervalMs);
  wake();

  return async () => {
    stopped = true;
    clearInterval(timer);
    clearTimeout(reconnectTimer);
    await running;
    await listener?.end().catch(() => undefined);
  };
}
