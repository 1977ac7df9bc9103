import type { Db } from '@booking/db';
import { OUTBOX_CHANNEL } from '@booking/events';
import type { DeliveryQueue } from '@booking/webhook-queue';
import type { Logger } from 'pino';
import { Client } from 'pg';
import { relayOutbox } from './relay-outbox';
import { sweepUnqueued } from './sweep-unqueued';

/**
 * Runs the relay: wakes on PostgreSQL notifications from committed events (low latency) and on
 * a timer (in case a notification was missed or the listener was reconnecting), drains the
 * outbox batch by batch, and sweeps for unqueued deliveries now and then. Returns a stop function.
 */
export async function startOutboxRelay(deps: {
  db: Db;
  queue: DeliveryQueue;
  databaseUrl: string;
  retryDelaysMs: number[];
  intervalMs: number;
  sweepIntervalMs: number;
  logger: Logger;
}): Promise<() => Promise<void>> {
  let stopped = false;
  let running: Promise<void> | null = null;
  let again = false;
  let lastSweep = 0;

  const drain = async () => {
    while (!stopped && (await relayOutbox(deps.db, deps.queue, deps.retryDelaysMs)) > 0) {
      // keep going until the outbox is empty
    }
    if (!stopped && Date.now() - lastSweep > deps.sweepIntervalMs) {
      lastSweep = Date.now();
      const swept = await sweepUnqueued(deps.db, deps.queue, deps.retryDelaysMs, deps.sweepIntervalMs * 2);
      if (swept > 0) deps.logger.warn({ swept }, 'queued deliveries that had lost their job');
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

  const listener = new Client({ connectionString: deps.databaseUrl });
  listener.on('error', (error) => deps.logger.warn({ err: error }, 'outbox listener connection lost; polling only'));
  listener.on('notification', wake);
  await listener.connect();
  await listener.query(`LISTEN ${OUTBOX_CHANNEL}`);

  const timer = setInterval(wake, deps.intervalMs);
  wake();

  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
    await listener.end().catch(() => undefined);
  };
}
