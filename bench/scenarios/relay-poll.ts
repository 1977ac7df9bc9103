import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Outbox } from '../lib/outbox';
import { percentile } from '../lib/load';
import type { Row } from '../lib/report';

/** The relay module of a checkout: its claim statement, by the checkout's own code. */
interface RelayModule {
  relayBatch(traced: boolean): { name?: string; text: string };
}

const RELAYED = 200_000;
const ROUNDS = 4;
const POLLS_PER_ROUND = 50;

const UNBOUNDED = `relay poll, nothing waiting, ${RELAYED} relayed events awaiting VACUUM: unbounded claim`;
const BOUNDED = `relay poll, nothing waiting, ${RELAYED} relayed events awaiting VACUUM: claim from the drain's bound`;

/**
 * What a relay poll costs PostgreSQL between two runs of autovacuum (which waits for a fifth of
 * the events table to be dead): this checkout's claim statement with nothing waiting and RELAYED
 * events of the last hour relayed and not vacuumed, unbounded (as every poll read before the
 * bound, and one drain a minute still reads) and from a bound a minute back. Rounds alternate; each poll is timed from
 * send to answer on one connection. Runs in the webhook database, whose outbox and deliveries it
 * empties after.
 */
export async function relayPollCost(outbox: Outbox): Promise<Row[]> {
  // Writing the relayed events takes seconds: past the apps' statement timeout on a slow machine.
  const pool = outbox.checkout.db.createPgPool(outbox.databaseUrl, {
    poolSize: 1,
    statementTimeoutMs: 300_000,
    transactionTimeoutMs: 300_000,
  });
  process.stderr.write(`relay poll: ${RELAYED} relayed events awaiting VACUUM... `);
  try {
    await pool.query('ALTER TABLE events SET (autovacuum_enabled = false)');
    await pool.query(
      `INSERT INTO events (id, tenant_id, name, entity_type, entity_id, schema_version, data, created_at, relayed_at)
       SELECT gen_random_uuid(), $1, 'booking.created', 'booking', gen_random_uuid(), 1, '{}'::jsonb,
              now() - interval '1 hour' + make_interval(secs => n * 3600.0 / $2), NULL
       FROM generate_series(1, $2::int) AS n`,
      [outbox.tenantId, RELAYED],
    );
    // Relayed as the relay does it: each event's waiting version dies, its index entry stays.
    await pool.query('UPDATE events SET relayed_at = now() WHERE relayed_at IS NULL');
    // Statistics, as autovacuum's ANALYZE keeps them (it is off on some machines).
    await pool.query('ANALYZE events');
    const relay = (await import(
      path.join(outbox.checkout.root, 'apps', 'dispatcher', 'src', 'relay', 'relay-outbox.ts')
    )) as RelayModule;
    const statement = relay.relayBatch(false);
    const poll = async (createdFrom: Date | string) => {
      const started = performance.now();
      await pool.query({ ...statement, values: [1000, outbox.checkout.events.SUBSCRIBABLE_EVENTS, createdFrom] });
      return performance.now() - started;
    };
    const times: Record<'unbounded' | 'bounded', number[]> = { unbounded: [], bounded: [] };
    // The first unbounded scan marks the dead entries it meets, as the relay's first poll would.
    await poll('-infinity');
    for (let round = 0; round < ROUNDS; round += 1) {
      for (let i = 0; i < POLLS_PER_ROUND; i += 1) times.unbounded.push(await poll('-infinity'));
      for (let i = 0; i < POLLS_PER_ROUND; i += 1) times.bounded.push(await poll(new Date(Date.now() - 60_000)));
    }
    const figures = (ms: number[]) => {
      const sorted = [...ms].sort((a, b) => a - b);
      const mean = ms.reduce((sum, t) => sum + t, 0) / ms.length;
      return { value: 1000 / mean, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
    };
    const [unbounded, bounded] = [figures(times.unbounded), figures(times.bounded)];
    process.stderr.write(`p50 ${unbounded.p50.toFixed(2)} ms unbounded, ${bounded.p50.toFixed(2)} ms bounded\n`);
    return [
      { name: UNBOUNDED, unit: 'per_s', ...unbounded },
      { name: BOUNDED, unit: 'per_s', against: UNBOUNDED, ...bounded },
    ];
  } finally {
    try {
      await pool.query('ALTER TABLE events RESET (autovacuum_enabled)');
    } finally {
      try {
        // Emptied with TRUNCATE, as prepareOutbox empties it: a DELETE would check each event's
        // deliveries one by one.
        await pool.query('TRUNCATE webhook_attempts, webhook_deliveries, events CASCADE');
      } finally {
        await pool.end();
      }
    }
  }
}
