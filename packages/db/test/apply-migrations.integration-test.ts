import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { applyMigrations, MIGRATIONS_DIR } from '../src/migrations/apply-migrations';

interface MigrationRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  logs: string | null;
  applied_steps_count: number;
}

const baseUrl = new URL(process.env.DATABASE_URL!);
const urlFor = (name: string): string => Object.assign(new URL(baseUrl), { pathname: `/${name}` }).toString();
const created: string[] = [];

/** A database name nobody has used, so the runner must create it; dropped in afterAll. */
function freshDatabase(): string {
  const name = `migrations_${randomBytes(6).toString('hex')}`;
  created.push(name);
  return urlFor(name);
}

async function withClient<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const migrationRows = (url: string): Promise<MigrationRow[]> =>
  withClient(
    url,
    async (c) => (await c.query<MigrationRow>('SELECT * FROM "_prisma_migrations" ORDER BY migration_name')).rows,
  );

/** The migrations on disk, read independently of the runner's own listMigrations. */
async function migrationsOnDisk(): Promise<{ name: string; checksum: string }[]> {
  const names = (await readdir(MIGRATIONS_DIR, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => ({
      name,
      checksum: createHash('sha256')
        .update(await readFile(path.join(MIGRATIONS_DIR, name, 'migration.sql')))
        .digest('hex'),
    })),
  );
}

afterAll(async () => {
  await withClient(urlFor('postgres'), async (admin) => {
    for (const name of created) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
});

test('when the database does not exist, then it is created and every migration is recorded as Prisma records it', async () => {
  const url = freshDatabase();
  const onDisk = await migrationsOnDisk();
  expect(onDisk.length).toBeGreaterThan(0);

  expect(await applyMigrations(url)).toEqual(onDisk.map((m) => m.name));

  const rows = await migrationRows(url);
  expect(rows.map((r) => [r.migration_name, r.checksum, r.applied_steps_count, r.rolled_back_at])).toEqual(
    onDisk.map((m) => [m.name, m.checksum, 1, null]),
  );
  for (const row of rows) expect(row.finished_at).toBeInstanceOf(Date);
});

test('when every migration is already applied, then a second run applies nothing', async () => {
  const url = freshDatabase();
  await applyMigrations(url);
  const before = await migrationRows(url);

  expect(await applyMigrations(url)).toEqual([]);
  expect(await migrationRows(url)).toEqual(before);
});

test('when two runs start at once on a missing database, then each migration is applied exactly once', async () => {
  const url = freshDatabase();
  const onDisk = (await migrationsOnDisk()).map((m) => m.name);

  // Both race to create the database, then queue on the advisory lock.
  const [first, second] = await Promise.all([applyMigrations(url), applyMigrations(url)]);

  expect([...first, ...second].sort()).toEqual(onDisk);
  expect((await migrationRows(url)).map((r) => r.migration_name)).toEqual(onDisk);
});

describe('when a migration fails', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    await cp(MIGRATIONS_DIR, dir, { recursive: true });
    await mkdir(path.join(dir, '99999999999999_broken'));
    // The table proves the failed migration's transaction was rolled back.
    await writeFile(
      path.join(dir, '99999999999999_broken', 'migration.sql'),
      'CREATE TABLE "half_done" ("id" INTEGER);\nSELECT * FROM "no_such_table";\n',
    );
  });

  afterAll(() => rm(dir, { recursive: true, force: true }));

  test('when it fails, then the run rejects, records the failure with its error and a later run refuses to continue', async () => {
    const url = freshDatabase();

    await expect(applyMigrations(url, { dir })).rejects.toThrow(
      /Migration 99999999999999_broken failed: .*no_such_table/,
    );

    const rows = await migrationRows(url);
    const broken = rows.filter((r) => r.migration_name === '99999999999999_broken');
    expect(broken).toEqual([
      expect.objectContaining({
        finished_at: null,
        rolled_back_at: null,
        applied_steps_count: 0,
        logs: expect.stringContaining('no_such_table'),
      }),
    ]);
    // The migrations before it stay applied; the broken one left nothing behind.
    expect(rows.filter((r) => r.finished_at !== null)).toHaveLength(rows.length - 1);
    const halfDone = await withClient(url, (c) => c.query("SELECT to_regclass('half_done') AS t"));
    expect(halfDone.rows[0]).toEqual({ t: null });

    await expect(applyMigrations(url, { dir })).rejects.toThrow(
      'Migration 99999999999999_broken failed earlier and needs attention',
    );
    // Also with the broken migration gone from disk: the record, not the file, blocks the run.
    await expect(applyMigrations(url)).rejects.toThrow('failed earlier and needs attention');
  });
});
