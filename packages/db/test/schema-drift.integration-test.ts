import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { applyMigrations } from '../src/migrations/apply-migrations';
import { findSchemaDrift } from './schema-drift';

// `prisma migrate diff` needs Prisma's native schema engine, which this machine does not have,
// so drift is found by applying the hand-written migrations to an empty database and comparing
// the result with the DMMF of schema.prisma (which Prisma computes in WebAssembly).
const SCHEMA_TEXT = readFileSync(path.resolve(__dirname, '../../../prisma/schema.prisma'), 'utf8');

// A database of its own, so the comparison sees exactly what the migrations create.
const baseUrl = new URL(process.env.DATABASE_URL!);
const dbName = `drift_${randomBytes(6).toString('hex')}`;
const dbUrl = Object.assign(new URL(baseUrl), { pathname: `/${dbName}` }).toString();

let client: Client;

beforeAll(async () => {
  await applyMigrations(dbUrl);
  client = new Client({ connectionString: dbUrl });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  const admin = new Client({ connectionString: Object.assign(new URL(baseUrl), { pathname: '/postgres' }).toString() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  await admin.end();
});

test('when all migrations are applied to an empty database, then it matches schema.prisma exactly', async () => {
  expect(await findSchemaDrift(client, SCHEMA_TEXT)).toEqual([]);
});

test('when schema.prisma has a field the migrations do not create, then the drift check reports it', async () => {
  // Proves the check can fail: the same database against a schema with one more column.
  const drifted = SCHEMA_TEXT.replace(/^model Tenant \{$/m, 'model Tenant {\n  extra String');
  expect(drifted).not.toBe(SCHEMA_TEXT);

  expect(await findSchemaDrift(client, drifted)).toEqual(['missing column: tenants.extra text NOT NULL']);
});
