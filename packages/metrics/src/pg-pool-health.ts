import { Gauge, type Registry } from 'prom-client';

/** What pg's Pool tells of its connections; read on each scrape, never per query. */
interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  options: { max?: number };
}

/**
 * PostgreSQL pool health, read from the pool on each scrape: connections in use and idle, the
 * pool's size, and callers waiting for a connection (a pool too small, or PostgreSQL too slow).
 */
export function watchPgPool(registry: Registry, pool: PoolCounts): void {
  new Gauge({
    name: 'db_pool_connections',
    help: 'PostgreSQL connections of the pool by state: in_use (lent to a query or transaction) or idle',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
      this.set({ state: 'idle' }, pool.idleCount);
    },
  });
  new Gauge({
    name: 'db_pool_max_connections',
    help: 'Most PostgreSQL connections the pool opens (DB_POOL_SIZE)',
    registers: [registry],
    collect() {
      this.set(pool.options.max ?? 10);
    },
  });
  new Gauge({
    name: 'db_pool_waiting_requests',
    help: 'Callers waiting for a free connection of the pool',
    registers: [registry],
    collect() {
      this.set(pool.waitingCount);
    },
  });
}
