import { execFile } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { generateApiKey, hashSecret, parseApiKey } from '@booking/signing';
import { createApiKey, listApiKeys, revokeApiKey } from '../src/operators/api-key-admin';
import { confirmedBooking, createTestApp, seedTenant, type TestApp } from '@booking/test-kit';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const CLI_TIMEOUT_MS = 60_000;

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `pnpm exec tsx apps/api/src/cli/keys.ts ...` against the test database, killed after a minute. */
function runKeysCli(args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      'pnpm',
      ['exec', 'tsx', 'apps/api/src/cli/keys.ts', ...args],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, DATABASE_URL: process.env.DATABASE_URL },
        timeout: CLI_TIMEOUT_MS,
        killSignal: 'SIGKILL',
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('tenant API keys', () => {
  let t: TestApp;
  let demo: DemoTenant;
  /** A confirmed booking of the tenant, for the staff route GET /api/bookings/{id}. */
  let bookingId: string;

  beforeAll(async () => {
    t = createTestApp();
    demo = await seedTenant(t.deps);
    bookingId = (await confirmedBooking(t, demo, { guests: 1 })).booking_id;
  });
  afterAll(() => t.close());

  const getBooking = (authorization?: string) => {
    const req = request(t.app).get(`/api/bookings/${bookingId}`);
    return authorization === undefined ? req : req.set('Authorization', authorization);
  };
  const prefixOf = (key: string) => parseApiKey(key)!.prefix;

  describe('authentication', () => {
    it('when a valid staff key is presented, then the staff route answers 200', async () => {
      const res = await getBooking(`Bearer ${demo.api_keys.staff}`);

      expect(res.status).toBe(200);
      expect(res.body.booking_id).toBe(bookingId);
    });

    it('when the Authorization header is missing, then it is 401 unauthorized', async () => {
      const res = await getBooking();

      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized' });
    });

    it('when the scheme is not Bearer, then it is 401 unauthorized', async () => {
      const key = demo.api_keys.admin;
      for (const header of [
        `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
        `Token ${key}`,
        key,
        `Bearer${key}`,
        `Bearer  ${key}`,
      ]) {
        const res = await getBooking(header);

        expect({ header, status: res.status, body: res.body }).toEqual({
          header,
          status: 401,
          body: { error: 'unauthorized' },
        });
      }
    });

    it('when the key is malformed, then it is 401 unauthorized', async () => {
      const { prefix, secret } = parseApiKey(demo.api_keys.staff)!;
      for (const token of [
        '',
        'svc_',
        'not-a-key',
        `${prefix}.${secret}`,
        `svc_${prefix}`,
        `svc_${prefix}.`,
        `svc_${prefix}.short`,
        `svc_${prefix}.${secret}.extra`,
        `svc_${prefix}!.${secret}`,
        `sk_${prefix}.${secret}`,
      ]) {
        const res = await getBooking(`Bearer ${token}`);

        expect({ token, status: res.status, body: res.body }).toEqual({
          token,
          status: 401,
          body: { error: 'unauthorized' },
        });
      }
    });

    it('when the prefix is unknown, then it is 401 unauthorized', async () => {
      const res = await getBooking(`Bearer ${generateApiKey().token}`);

      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized' });
    });

    it('when the prefix is right but the secret is wrong, then it is 401 unauthorized and last_used_at is untouched', async () => {
      const created = await createApiKey(t.deps.db, { tenantSlug: demo.tenant.slug, role: 'admin' });
      const wrongSecret = parseApiKey(generateApiKey().token)!.secret;

      const res = await getBooking(`Bearer svc_${created.prefix}.${wrongSecret}`);

      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized' });
      expect((await t.deps.db.apiKey.findUniqueOrThrow({ where: { prefix: created.prefix } })).lastUsedAt).toBeNull();
    });

    it('when the key is revoked, then it is 401 unauthorized', async () => {
      const created = await createApiKey(t.deps.db, { tenantSlug: demo.tenant.slug, role: 'admin' });
      await getBooking(`Bearer ${created.key}`).expect(200);
      await t.deps.db.apiKey.update({ where: { prefix: created.prefix }, data: { revokedAt: new Date() } });

      const res = await getBooking(`Bearer ${created.key}`);

      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized' });
    });

    it('when a key is used, then last_used_at is recorded', async () => {
      const created = await createApiKey(t.deps.db, { tenantSlug: demo.tenant.slug, role: 'staff' });
      expect(created.last_used_at).toBeNull();
      const before = Date.now();

      await getBooking(`Bearer ${created.key}`).expect(200);

      const key = await t.deps.db.apiKey.findUniqueOrThrow({ where: { prefix: created.prefix } });
      expect(key.lastUsedAt).not.toBeNull();
      expect(key.lastUsedAt!.getTime()).toBeGreaterThanOrEqual(before - 1000);
      expect(key.lastUsedAt!.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
      const listed = (await listApiKeys(t.deps.db, demo.tenant.slug)).find((k) => k.prefix === created.prefix);
      expect(listed?.last_used_at).toBe(key.lastUsedAt!.toISOString());
    });
  });

  describe('roles', () => {
    it('when a staff key cancels a booking, then it is 403 forbidden in the Error shape and the booking is unchanged', async () => {
      const res = await request(t.app)
        .post(`/api/bookings/${bookingId}/cancel`)
        .set('Authorization', `Bearer ${demo.api_keys.staff}`);

      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden', detail: expect.any(String) });
      expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: bookingId } })).status).toBe('confirmed');
      expect(await t.deps.db.event.count({ where: { entityId: bookingId, name: 'booking.cancelled' } })).toBe(0);
    });

    it('when a staff key uses a staff route, then the role is enough', async () => {
      const res = await request(t.app)
        .post(`/api/bookings/${bookingId}/check-in`)
        .set('Authorization', `Bearer ${demo.api_keys.staff}`);

      expect(res.status).toBe(200);
    });

    it('when a revoked key calls a manager route, then it is 401, not 403', async () => {
      const created = await createApiKey(t.deps.db, { tenantSlug: demo.tenant.slug, role: 'staff' });
      await revokeApiKey(t.deps.db, created.prefix);

      const res = await request(t.app)
        .post(`/api/bookings/${bookingId}/cancel`)
        .set('Authorization', `Bearer ${created.key}`);

      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized' });
    });
  });

  describe('api-key-admin', () => {
    it('when a key is created, then it authenticates with its role and only the prefix and the secret hash are stored', async () => {
      const created = await createApiKey(t.deps.db, {
        tenantSlug: demo.tenant.slug,
        role: 'admin',
        name: 'Webhook robot',
        scopes: ['webhooks:write'],
      });

      expect(created).toMatchObject({
        name: 'Webhook robot',
        role: 'admin',
        scopes: ['webhooks:write'],
        tenant: demo.tenant,
        revoked_at: null,
      });
      const { prefix, secret } = parseApiKey(created.key)!;
      expect(prefix).toBe(created.prefix);
      const stored = await t.deps.db.apiKey.findUniqueOrThrow({ where: { prefix } });
      expect(stored).toMatchObject({
        tenantId: demo.tenant.id,
        role: 'admin',
        scopes: ['webhooks:write'],
        secretHash: hashSecret(secret),
      });
      expect(JSON.stringify(stored)).not.toContain(secret);
      await getBooking(`Bearer ${created.key}`).expect(200);
    });

    it('when keys are listed, then every key of the tenant is there and no secret or hash is', async () => {
      const created = await createApiKey(t.deps.db, {
        tenantSlug: demo.tenant.slug,
        role: 'manager',
        name: 'Front desk',
      });

      const keys = await listApiKeys(t.deps.db, demo.tenant.slug);

      const prefixes = keys.map((k) => k.prefix);
      for (const key of Object.values(demo.api_keys)) expect(prefixes).toContain(prefixOf(key));
      const listed = keys.find((k) => k.prefix === created.prefix);
      expect(listed).toEqual({
        id: created.id,
        prefix: created.prefix,
        name: 'Front desk',
        role: 'manager',
        scopes: [],
        created_at: created.created_at,
        last_used_at: null,
        revoked_at: null,
      });
      for (const key of keys) {
        expect(Object.keys(key).sort()).toEqual([
          'created_at',
          'id',
          'last_used_at',
          'name',
          'prefix',
          'revoked_at',
          'role',
          'scopes',
        ]);
      }
      const text = JSON.stringify(keys);
      expect(text).not.toContain(parseApiKey(created.key)!.secret);
      expect(text).not.toContain(hashSecret(parseApiKey(created.key)!.secret));
      const other = await seedTenant(t.deps);
      expect(text).not.toContain(prefixOf(other.api_keys.admin));
    });

    it('when a key is revoked, then it stops working and revoking it again changes nothing', async () => {
      const created = await createApiKey(t.deps.db, { tenantSlug: demo.tenant.slug, role: 'staff' });
      await getBooking(`Bearer ${created.key}`).expect(200);

      const first = await revokeApiKey(t.deps.db, created.prefix);
      const second = await revokeApiKey(t.deps.db, created.prefix);

      expect(first).toEqual({ prefix: created.prefix, revoked_at: expect.any(String), already_revoked: false });
      expect(second).toEqual({ prefix: created.prefix, revoked_at: first.revoked_at, already_revoked: true });
      const res = await getBooking(`Bearer ${created.key}`);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized' });
      const listed = (await listApiKeys(t.deps.db, demo.tenant.slug)).find((k) => k.prefix === created.prefix);
      expect(listed?.revoked_at).toBe(first.revoked_at);
    });

    it('when the request is invalid or names nothing, then it is refused with its own code and nothing is stored', async () => {
      const count = () => t.deps.db.apiKey.count({ where: { tenantId: demo.tenant.id } });
      const before = await count();

      await expect(createApiKey(t.deps.db, { tenantSlug: demo.tenant.slug, role: 'owner' })).rejects.toMatchObject({
        code: 'invalid_role',
      });
      await expect(
        createApiKey(t.deps.db, { tenantSlug: demo.tenant.slug, role: 'manager', scopes: ['webhooks:write'] }),
      ).rejects.toMatchObject({ code: 'invalid_scope' });
      await expect(
        createApiKey(t.deps.db, { tenantSlug: demo.tenant.slug, role: 'admin', scopes: ['bookings:delete'] }),
      ).rejects.toMatchObject({ code: 'invalid_scope' });
      await expect(createApiKey(t.deps.db, { tenantSlug: 'no-such-tenant', role: 'staff' })).rejects.toMatchObject({
        code: 'tenant_not_found',
      });
      await expect(listApiKeys(t.deps.db, 'no-such-tenant')).rejects.toMatchObject({ code: 'tenant_not_found' });
      await expect(revokeApiKey(t.deps.db, generateApiKey().prefix)).rejects.toMatchObject({ code: 'key_not_found' });

      const other = await seedTenant(t.deps);
      await expect(
        revokeApiKey(t.deps.db, prefixOf(other.api_keys.staff), { tenantSlug: demo.tenant.slug }),
      ).rejects.toMatchObject({
        code: 'key_not_found',
      });
      expect(
        (await t.deps.db.apiKey.findUniqueOrThrow({ where: { prefix: prefixOf(other.api_keys.staff) } })).revokedAt,
      ).toBeNull();
      expect(await count()).toBe(before);
    });
  });

  describe('pnpm keys (CLI)', () => {
    it(
      'when a manager key is created with --json, then the printed key authenticates as manager',
      async () => {
        const res = await runKeysCli([
          'create',
          '--tenant',
          demo.tenant.slug,
          '--role',
          'manager',
          '--name',
          'CLI test',
          '--json',
        ]);

        expect(res).toMatchObject({ code: 0, stderr: '' });
        const created = JSON.parse(res.stdout);
        expect(created).toMatchObject({
          prefix: expect.any(String),
          role: 'manager',
          name: 'CLI test',
          scopes: [],
          key: expect.stringMatching(/^svc_/),
        });
        expect(created).not.toHaveProperty('secret_hash');
        expect(parseApiKey(created.key)?.prefix).toBe(created.prefix);
        const stored = await t.deps.db.apiKey.findUniqueOrThrow({ where: { prefix: created.prefix } });
        expect(stored).toMatchObject({ tenantId: demo.tenant.id, role: 'manager', name: 'CLI test' });
        await getBooking(`Bearer ${created.key}`).expect(200);
        // A manager may cancel: the route gets past the role check to the booking itself.
        const cancel = await request(t.app)
          .post('/api/bookings/00000000-0000-4000-8000-000000000009/cancel')
          .set('Authorization', `Bearer ${created.key}`);
        expect(cancel.status).toBe(404);
        expect(cancel.body).toEqual({ error: 'booking_not_found' });
      },
      CLI_TIMEOUT_MS * 2,
    );

    it(
      'when keys are listed and one revoked through the CLI, then no secret is printed and the key stops working',
      async () => {
        const created = await createApiKey(t.deps.db, {
          tenantSlug: demo.tenant.slug,
          role: 'staff',
          name: 'to revoke',
        });

        const list = await runKeysCli(['list', '--tenant', demo.tenant.slug, '--json']);
        expect(list.code).toBe(0);
        const keys = JSON.parse(list.stdout) as Record<string, unknown>[];
        expect(keys.map((k) => k.prefix)).toContain(created.prefix);
        expect(list.stdout).not.toContain(parseApiKey(created.key)!.secret);
        expect(list.stdout).not.toMatch(/secret/i);

        const [revoked, table] = await Promise.all([
          runKeysCli(['revoke', created.prefix]),
          runKeysCli(['list', '--tenant', demo.tenant.slug]),
        ]);
        expect(revoked).toMatchObject({ code: 0, stderr: '' });
        expect(revoked.stdout).toContain(`revoked key ${created.prefix}`);
        expect(table.code).toBe(0);
        expect(table.stdout).toContain('PREFIX');
        expect(table.stdout).toContain(created.prefix);
        await getBooking(`Bearer ${created.key}`).expect(401);

        const again = await runKeysCli(['revoke', created.prefix]);
        expect(again.code).toBe(0);
        expect(again.stdout).toMatch(/already revoked/);
      },
      CLI_TIMEOUT_MS * 4,
    );

    it(
      'when the role is invalid or the arguments wrong, then it exits 2; when the tenant or key is unknown, then it exits 1',
      async () => {
        const before = await t.deps.db.apiKey.count({ where: { tenantId: demo.tenant.id } });

        const [badRole, scopeOnStaff, noTenant, unknownCommand, unknownTenant, unknownKey] = await Promise.all([
          runKeysCli(['create', '--tenant', demo.tenant.slug, '--role', 'superuser', '--json']),
          runKeysCli(['create', '--tenant', demo.tenant.slug, '--role', 'staff', '--scope', 'webhooks:write']),
          runKeysCli(['create', '--role', 'staff']),
          runKeysCli(['rotate', '--tenant', demo.tenant.slug]),
          runKeysCli(['list', '--tenant', 'no-such-tenant']),
          runKeysCli(['revoke', generateApiKey().prefix]),
        ]);

        expect(badRole.code).toBe(2);
        expect(badRole.stdout).toBe('');
        expect(badRole.stderr).toMatch(/role/);
        expect(scopeOnStaff.code).toBe(2);
        expect(scopeOnStaff.stderr).toMatch(/admin/);
        expect(noTenant.code).toBe(2);
        expect(noTenant.stderr).toMatch(/--tenant/);
        expect(unknownCommand.code).toBe(2);
        expect(unknownTenant.code).toBe(1);
        expect(unknownTenant.stderr).toMatch(/no-such-tenant/);
        expect(unknownKey.code).toBe(1);
        expect(await t.deps.db.apiKey.count({ where: { tenantId: demo.tenant.id } })).toBe(before);
      },
      CLI_TIMEOUT_MS * 2,
    );
  });
});
