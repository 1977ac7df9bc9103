import type { PgPool } from '@booking/db';
import { Gauge, type Registry } from 'prom-client';

/**
 * The oldest unrelayed event's age. `ORDER BY relayed_at, created_at` is the order of the index
 * on (relayed_at, created_at), so PostgreSQL reads one index entry; ordered by created_at alone
 * it would sort the whole backlog, which is largest exactly when the relay is behind.
 */
const OLDEST_UNRELAYED: { name: string; text: string } = {
  name: 'metrics-outbox-lag',
  text: `
    SELECT GREATEST(0, EXTRACT(EPOCH FROM now() - created_at))::float8 AS age
    FROM events WHERE relayed_at IS NULL
    ORDER BY relayed_at, created_at LIMIT 1`,
};

/**
 * `outbox_lag_seconds`, read on each scrape: 0 when the outbox is empty. When PostgreSQL does
 * not answer it reads NaN, unknown, never a stale or reassuring figure (db_pool_* tell why).
 */
export function watchOutboxLag(registry: Registry, pool: PgPool): void {
  new Gauge({
    name: 'outbox_lag_seconds',
    help: 'Age of the oldest event not yet relayed to webhook deliveries (0: none waiting)',
    registers: [registry],
    async collect() {
      try {
        const { rows } = await pool.query<{ age: number }>(OLDEST_UNRELAYED);
        this.set(rows[0]?.age ?? 0);
      } catch {
        this.set(Number.NaN);
      }
    },
  });
}
