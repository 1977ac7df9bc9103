import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { createPgPool, type PgPool } from '../src/pg-pool';
import { createPrismaClient } from '../src/prisma-client';

// refuseStatement reads the caller's request from its async context (the API's request
// deadline). A query that waited for a busy pool's connection must still be judged as its own
// caller's, not as whichever request happened to free the connection or open its socket.
describe('a pool whose statements are judged in their caller context', () => {
  const request = new AsyncLocalStorage<{ name: string; pastDeadline: boolean }>();
  const judged: string[] = [];
  const pool = createPgPool(process.env.DATABASE_URL!, {
    // One connection: the second caller waits in the pool's queue.
    poolSize: 1,
    refuseStatement: () => {
      const caller = request.getStore();
      judged.push(caller?.name ?? 'none');
      return caller?.pastDeadline ? new Error(`${caller.name} is past its deadline`) : undefined;
    },
  });

  afterAll(() => pool.end());

  it('when a query waits for the connection, then it is judged as its own caller, not as the one that opened or freed the connection', async () => {
    // An old request opens the pool's only connection, then passes its deadline.
    const old = { name: 'old', pastDeadline: false };
    await request.run(old, () => pool.query('SELECT 1'));
    old.pastDeadline = true;
    judged.length = 0;

    // Two fresh requests: the second waits until the first frees the connection.
    const [first, second] = await Promise.all([
      request.run({ name: 'first', pastDeadline: false }, () => pool.query('SELECT pg_sleep(0.1)')),
      request.run({ name: 'second', pastDeadline: false }, () =>
        pool.query({ name: 'probe', text: 'SELECT 2 AS two' }),
      ),
    ]);

    expect(first.rowCount).toBe(1);
    expect(second.rows).toEqual([{ two: 2 }]);
    expect(judged).toEqual(['first', 'second']);
  });
});

/** The zone and lock_timeout of a session of `pool`. */
async function sessionSettings(pool: PgPool): Promise<{ zone: string; lock: string }[]> {
  const { rows } = await pool.query<{ zone: string; lock: string }>(
    "SELECT current_setting('TimeZone') AS zone, current_setting('lock_timeout') AS lock",
  );
  return rows;
}

/** Runs `use` on a pool of one connection to `url`, ended after. */
async function onePool(url: string, use: (pool: PgPool) => Promise<void>): Promise<void> {
  const pool = createPgPool(url, { poolSize: 1 });
  try {
    await use(pool);
  } finally {
    await pool.end();
  }
}

describe('a pool on a server or URL whose session time zone is not UTC', () => {
  const url = new URL(process.env.DATABASE_URL!);
  url.searchParams.set('options', '-c TimeZone=Pacific/Chatham -c lock_timeout=1234');
  const pool = createPgPool(url.toString(), { poolSize: 1 });
  const db = createPrismaClient(pool);

  afterAll(() => db.$disconnect());

  it("when the URL's options set another zone, then sessions run in UTC with its other settings kept, and Prisma writes and reads the instants raw SQL and now() see", async () => {
    expect(await sessionSettings(pool)).toEqual([{ zone: 'UTC', lock: '1234ms' }]);

    // Written by Prisma, read raw; written raw (the default now()), read by Prisma.
    const at = new Date('2027-01-01T12:00:00.123Z');
    const tenant = await db.tenant.create({ data: { slug: `tz-${randomUUID()}`, name: 'Time zones', createdAt: at } });
    const { rows } = await pool.query<{ created_at: Date }>('SELECT created_at FROM tenants WHERE id = $1', [
      tenant.id,
    ]);
    expect(rows[0]!.created_at.toISOString()).toBe(at.toISOString());

    const before = Date.now();
    const fresh = await db.tenant.create({ data: { slug: `tz-${randomUUID()}`, name: 'Time zones' } });
    expect(Math.abs(fresh.createdAt.getTime() - before)).toBeLessThan(60_000);
  });

  it('when the password holds a bare % and PGOPTIONS sets other settings, then sessions run in UTC with those settings', async () => {
    const bare = new URL(process.env.DATABASE_URL!);
    bare.password = '100%'; // trust authentication: any password logs in
    const saved = process.env.PGOPTIONS;
    process.env.PGOPTIONS = '-c TimeZone=Asia/Kolkata -c lock_timeout=4321';
    const other = createPgPool(bare.toString(), { poolSize: 1 });
    if (saved === undefined) delete process.env.PGOPTIONS;
    else process.env.PGOPTIONS = saved;
    try {
      expect(await sessionSettings(other)).toEqual([{ zone: 'UTC', lock: '4321ms' }]);
    } finally {
      await other.end();
    }
  });

  it('when the URL asks for TLS as pg reads it (ssl=no-verify), then the pool still asks for it: this server has none', async () => {
    const tls = new URL(process.env.DATABASE_URL!);
    tls.searchParams.set('ssl', 'no-verify');
    tls.searchParams.set('options', '-c lock_timeout=1234');
    await onePool(tls.toString(), async (other) => {
      await expect(other.query('SELECT 1')).rejects.toThrow(/does not support SSL/);
    });
  });

  it('when the URL spells its options key with escapes, then they are moved out all the same and sessions run in UTC', async () => {
    const odd = `${process.env.DATABASE_URL!}${process.env.DATABASE_URL!.includes('?') ? '&' : '?'}%6Fptions=-c%20TimeZone%3DAsia/Kolkata%20-c%20lock_timeout%3D777`;
    await onePool(odd, async (other) => {
      expect(await sessionSettings(other)).toEqual([{ zone: 'UTC', lock: '777ms' }]);
    });
  });
});
