import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { applyMigrations } from '@booking/db';

/**
 * A fresh, migrated database and a queue prefix of its own, for tests that run the dispatcher:
 * its relay takes every event of the database it watches and its workers take every job of
 * their queue, so webhook tests must not share either with other test files. Returns the
 * settings to pass to createTestApp / loadConfig, and a function that drops the database.
 */
export async function createIsolatedDatabase(): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  const base = new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/booking_test');
  const name = `booking_wh_${randomBytes(5).toString('hex')}`;
  const url = new URL(base.toString());
  url.pathname = `/${name}`;
  await applyMigrations(url.toString());
  return {
    env: { DATABASE_URL: url.toString(), QUEUE_PREFIX: `test-${name}` },
    drop: async () => {
      const admin = new URL(base.toString());
      admin.pathname = '/postgres';
      const client = new Client({ connectionString: admin.toString() });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
