import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from 'pg';

/** Where `prisma migrate dev` writes migrations; this runner reads the same layout. */
export const MIGRATIONS_DIR = path.resolve(__dirname, '../../../../prisma/migrations');

// The key Prisma's migrate engine takes with pg_advisory_lock, so this runner and
// `prisma migrate deploy` never apply migrations at the same time.
const PRISMA_ADVISORY_LOCK = 72707369;

// Prisma's own bookkeeping table, column for column, so that `prisma migrate deploy` and
// `prisma migrate status` treat migrations applied here as their own.
const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

/** Creates the database named in the URL when the server does not have it yet. */
async function ensureDatabase(databaseUrl: string): Promise<void> {
  const target = new URL(databaseUrl);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`).catch((error: { code?: string }) => {
        // Another replica created it between our check and our CREATE: 42P04 if it had finished,
        // 23505 (on pg_database_datname_index) if both CREATEs ran at the same time.
        if (error.code !== '42P04' && error.code !== '23505') throw error;
      });
    }
  } finally {
    await client.end();
  }
}

export async function listMigrations(dir = MIGRATIONS_DIR): Promise<{ name: string; sql: string; checksum: string }[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

/**
 * Applies pending migrations in name order, each in its own transaction, under Prisma's advisory
 * lock so that several replicas starting at once apply each migration exactly once.
 * Returns the names it applied.
 */
export async function applyMigrations(
  databaseUrl: string,
  options: { dir?: string; log?: (line: string) => void } = {},
): Promise<string[]> {
  const log = options.log ?? (() => undefined);
  await ensureDatabase(databaseUrl);
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK]);
    await client.query(CREATE_MIGRATIONS_TABLE);
    const rows = (
      await client.query<AppliedRow>(
        'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"',
      )
    ).rows;
    const failed = rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
    if (failed) {
      throw new Error(
        `Migration ${failed.migration_name} failed earlier and needs attention (see _prisma_migrations.logs; ` +
          'mark it with `prisma migrate resolve` once fixed).',
      );
    }
    const done = new Map(
      rows.filter((r) => r.finished_at !== null && r.rolled_back_at === null).map((r) => [r.migration_name, r]),
    );

    for (const migration of await listMigrations(options.dir)) {
      const previous = done.get(migration.name);
      if (previous) {
        if (previous.checksum !== migration.checksum) {
          log(`warning: migration ${migration.name} was edited after it was applied`);
        }
        continue;
      }
      const id = randomUUID();
      try {
        await client.query('BEGIN');
        await client.query(
          'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)',
          [id, migration.checksum, migration.name],
        );
        await client.query(migration.sql);
        await client.query(
          'UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1',
          [id],
        );
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        // Leave the same trace a failed `prisma migrate deploy` leaves, so `migrate resolve` works.
        await client.query(
          'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, logs, started_at, applied_steps_count) VALUES ($1, $2, $3, $4, now(), 0)',
          [id, migration.checksum, migration.name, String(error)],
        );
        throw new Error(`Migration ${migration.name} failed: ${String(error)}`);
      }
      applied.push(migration.name);
      log(`applied migration ${migration.name}`);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK]).catch(() => undefined);
    await client.end();
  }
  return applied;
}
