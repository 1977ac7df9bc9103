import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  bearer,
  clientIp,
  createIsolatedDatabase,
  createTestApp,
  freePort,
  seedTenant,
  startTcpProxy,
  type TcpProxy,
  type TestApp,
  waitUntil,
} from '@booking/test-kit';
import { MARGIN_MS, expectBounded503s, timed, timedAll } from './support/fault-figures';

// Redis that does not answer (through a TCP proxy this file owns in front of the real one, or a
// black hole) or refuses connections (a port nothing listens on). PostgreSQL is the real one.
const TIMEOUTS = {
  REDIS_CONNECT_TIMEOUT_MS: '500',
  REDIS_COMMAND_TIMEOUT_MS: '500',
};
const COMMAND_TIMEOUT_MS = Number(TIMEOUTS.REDIS_COMMAND_TIMEOUT_MS);
/** The longest pause between reconnect attempts of the API's Redis connections. */
const RECONNECT_BACKOFF_MS = 500;
const REDIS_URL = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

/** How long the API may take to serve again once Redis answers (a reconnect, under CI load). */
const RECOVERY_MS = 5_000;

describe('Redis that does not answer or refuses connections', () => {
  let isolated: Awaited<ReturnType<typeof createIsolatedDatabase>>;
  let healthy: TestApp;
  let demo: DemoTenant;
  const proxies: TcpProxy[] = [];
  const apps: TestApp[] = [];

  beforeAll(async () => {
    // Test deliveries are written to PostgreSQL: a database of this file's own keeps them away
    // from every dispatcher of other test files.
    isolated = await createIsolatedDatabase();
    healthy = createTestApp({ ...isolated.env, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
    demo = await seedTenant(healthy.deps);
  }, 60_000);
  afterAll(async () => {
    // Proxies first: the apps' connections then close at once instead of waiting for an answer.
    for (const proxy of proxies) await proxy.close();
    for (const app of apps) await app.close();
    await healthy?.close();
    await isolated?.drop();
  }, 30_000);

  function appOn(redisUrl: string): TestApp {
    const app = createTestApp({ ...isolated.env, ...TIMEOUTS, REDIS_URL: redisUrl });
    apps.push(app);
    return app;
  }

  /**
   * A new app opens its PostgreSQL connections, and runs its first query, on its first request
   * that needs them: slow on a loaded machine, and not the stalled Redis's cost. A read that needs
   * no Redis pays it before the fault.
   */
  async function warmPostgres(t: TestApp): Promise<void> {
    const res = await request(t.app).get('/api/webhooks/endpoints').set('Authorization', bearer(demo.api_keys.admin));
    expect(res.status).toBe(200);
  }

  const escapeRoom = () => demo.experiences[1]!;
  const widget = (t: TestApp) =>
    request(t.app).get('/api/widget/experience').query({ tenant: demo.tenant.slug, experience: escapeRoom().slug });
  const hold = (t: TestApp, ip = clientIp()) =>
    request(t.app)
      .post('/api/bookings/hold')
      .set('X-Forwarded-For', ip)
      .send({ slot_id: escapeRoom().slots[0]!.id, experience_id: escapeRoom().id, seats: 2 });

  it('when Redis accepts connections and never answers, then requests that need it end with 503 within the bound', async () => {
    const blackHole = await startTcpProxy();
    proxies.push(blackHole);
    const app = appOn(`redis://127.0.0.1:${blackHole.port}`);
    await warmPostgres(app);

    const answers = await timedAll(10, (i) => (i % 2 === 0 ? widget(app) : hold(app)));

    // The rate limiter tries twice (it reloads its script after a failure): two command timeouts.
    expectBounded503s(answers, 2 * COMMAND_TIMEOUT_MS + MARGIN_MS);
  });

  it('when Redis stalls, then requests end with 503 within the bound, and once it answers again they succeed without a restart', async () => {
    const proxy = await startTcpProxy({ host: REDIS_URL.hostname, port: Number(REDIS_URL.port || 6379) });
    proxies.push(proxy);
    const app = appOn(`redis://127.0.0.1:${proxy.port}`);
    expect((await hold(app)).status).toBe(200);
    // The widget reads PostgreSQL before Redis: its first read, the app's first query, before the stall.
    expect((await widget(app)).status).toBe(200);

    proxy.freeze();
    const answers = await timedAll(10, (i) => (i % 2 === 0 ? widget(app) : hold(app)));
    proxy.resume();

    expectBounded503s(answers, 2 * COMMAND_TIMEOUT_MS + MARGIN_MS);
    // The connection that went silent is dropped and made again: the API serves again by itself
    // within a reconnect, without a restart.
    await waitUntil(async () => (await hold(app)).status === 200, {
      timeoutMs: RECOVERY_MS,
      intervalMs: 100,
      what: 'a hold to succeed once Redis answers again',
    });
    expect((await widget(app)).status).toBe(200);
  });

  it('when Redis refuses connections, then the webhook test route answers 503 at once instead of waiting for the queue', async () => {
    const created = await request(healthy.app)
      .post('/api/webhooks/endpoints')
      .set('Authorization', bearer(demo.api_keys.admin))
      .send({ url: 'http://127.0.0.1:9/hooks' });
    expect(created.status).toBe(201);
    const app = appOn(`redis://127.0.0.1:${await freePort()}`);
    await warmPostgres(app);

    const answers: Awaited<ReturnType<typeof timed>>[] = [];
    for (let i = 0; i < 5; i += 1) {
      answers.push(
        await timed(() =>
          request(app.app)
            .post(`/api/webhooks/endpoints/${created.body.id}/test`)
            .set('Authorization', bearer(demo.api_keys.admin)),
        ),
      );
    }

    // A refused connection fails a command after one more reconnect attempt: at most the longest
    // reconnect back-off (500 ms) away, and well before any timeout.
    expectBounded503s(answers, RECONNECT_BACKOFF_MS + MARGIN_MS);
  });
});
