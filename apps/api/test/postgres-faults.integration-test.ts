import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { Client } from 'pg';
import {
  bookingBody,
  clientIp,
  createTestApp,
  placeHold,
  seedTenant,
  sleep,
  startTcpProxy,
  type TcpProxy,
  type TestApp,
  waitUntil,
} from '@booking/test-kit';
import { MARGIN_MS, expectBounded503s, timed, timedAll, timedSince } from './support/fault-figures';

// PostgreSQL that accepts connections but does not answer, through a TCP proxy this file owns in
// front of the real server. Timeouts are scaled down so each case takes a few seconds; the
// production defaults keep the same proportions.
const TIMEOUTS = {
  DB_CONNECT_TIMEOUT_MS: '1000',
  DB_STATEMENT_TIMEOUT_MS: '1000', // the client gives up on an answer after 2 s
  DB_TRANSACTION_TIMEOUT_MS: '2000',
  REQUEST_TIMEOUT_MS: '3000',
};
/** The client's answer timeout: DB_STATEMENT_TIMEOUT_MS and the 1 s it leaves the server to cancel. */
const QUERY_TIMEOUT_MS = Number(TIMEOUTS.DB_STATEMENT_TIMEOUT_MS) + 1_000;

const DATABASE_URL = new URL(process.env.DATABASE_URL!);

/** DATABASE_URL with the proxy in place of the server. */
function through(proxy: TcpProxy): string {
  const url = new URL(DATABASE_URL.toString());
  url.host = `127.0.0.1:${proxy.port}`;
  return url.toString();
}

describe('PostgreSQL that does not answer', () => {
  let direct: TestApp;
  let demo: DemoTenant;
  const proxies: TcpProxy[] = [];
  const apps: TestApp[] = [];

  beforeAll(async () => {
    direct = createTestApp();
    demo = await seedTenant(direct.deps);
  });
  afterAll(async () => {
    // Proxies first: the apps' connections then close at once instead of waiting for an answer.
    for (const proxy of proxies) await proxy.close();
    for (const app of apps) await app.close();
    await direct.close();
  });

  /** A proxy and an app behind it, both closed in afterAll. */
  async function appBehindProxy(target: boolean, env: Record<string, string> = {}) {
    const proxy = await startTcpProxy(
      target ? { host: DATABASE_URL.hostname, port: Number(DATABASE_URL.port) } : undefined,
    );
    proxies.push(proxy);
    const app = createTestApp({ ...TIMEOUTS, ...env, DATABASE_URL: through(proxy) });
    apps.push(app);
    return { proxy, app };
  }

  const escapeRoom = () => demo.experiences[1]!;
  const widget = (t: TestApp) =>
    request(t.app).get('/api/widget/experience').query({ tenant: demo.tenant.slug, experience: escapeRoom().slug });
  const hold = (t: TestApp, ip: string) =>
    request(t.app)
      .post('/api/bookings/hold')
      .set('X-Forwarded-For', ip)
      .send({ slot_id: escapeRoom().slots[0]!.id, experience_id: escapeRoom().id, seats: 2 });
  const seatsBooked = async (slotId: string) =>
    (await direct.deps.db.slot.findUniqueOrThrow({ where: { id: slotId } })).seatsBooked;

  /** Whether a transaction of this test could lock the slot row right now, i.e. no other holds a lock on it. */
  async function slotRowIsFree(slotId: string): Promise<boolean> {
    const client = new Client({ connectionString: DATABASE_URL.toString() });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT 1 FROM slots WHERE id = $1 FOR UPDATE NOWAIT', [slotId]);
      return true;
    } catch {
      return false;
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      await client.end();
    }
  }

  it('when PostgreSQL accepts connections and never answers, then every request to a database route ends with 503 within the bound', async () => {
    const { app } = await appBehindProxy(false);

    // More requests than the pool has connections: those waiting for one are bounded too.
    const answers = await timedAll(16, (i) => (i % 2 === 0 ? widget(app) : hold(app, clientIp())));

    // The connection timeout answers, well before the request deadline would.
    expectBounded503s(answers, Number(TIMEOUTS.DB_CONNECT_TIMEOUT_MS) + MARGIN_MS);
  });

  it('when PostgreSQL stalls inside a booking transaction, then 503 within the bound, the server rolls the transaction back, and nothing commits even when the stalled statement arrives later', async () => {
    const { proxy, app } = await appBehindProxy(true);
    const experience = escapeRoom();
    const slot = experience.slots[0]!;
    const ip = clientIp();
    const holdId = await placeHold(app, ip, experience, slot.id, 2);
    const seatsBefore = await seatsBooked(slot.id);
    // Paid by gift card, so written in a transaction (a plain booking is one statement: see below).
    const body = { ...bookingBody(demo, experience, slot.id, holdId, 2), gift_card_code: demo.gift_cards[0]!.code };

    // The stall begins when the booking row is written: the transaction has begun and holds the slot row's lock.
    let stalledAt = 0;
    void proxy.freezeOn('INSERT INTO "public"."bookings"').then(() => (stalledAt = Date.now()));
    const answer = await timed(() => request(app.app).post('/api/bookings').set('X-Forwarded-For', ip).send(body));

    expect(stalledAt).toBeGreaterThan(0);
    // The client gives up on the statement's answer, closes the connection and the request fails.
    expectBounded503s([timedSince(answer, stalledAt)], QUERY_TIMEOUT_MS + MARGIN_MS);
    // PostgreSQL ends the session left idle in its transaction (DB_TRANSACTION_TIMEOUT_MS) and the lock goes.
    await waitUntil(() => slotRowIsFree(slot.id), {
      timeoutMs: Number(TIMEOUTS.DB_TRANSACTION_TIMEOUT_MS) + 1_000,
      intervalMs: 100,
      what: "the stalled transaction's lock on the slot row to go",
    });

    // Past the bound, the stalled statement reaches the server: nothing of the request commits.
    proxy.resume();
    // Nothing may commit: an absence, so give the late statement a moment to do its worst.
    await sleep(500);
    expect(await direct.deps.db.booking.count({ where: { holdId } })).toBe(0);
    expect(await seatsBooked(slot.id)).toBe(seatsBefore);

    // The API recovers without a restart, and the hold, never used, books now.
    const retry = await request(app.app).post('/api/bookings').set('X-Forwarded-For', ip).send(body);
    expect(retry.status).toBe(201);
    expect(await direct.deps.db.booking.count({ where: { holdId } })).toBe(1);
  });

  // A plain booking is one statement, its own COMMIT: stalled, it is in doubt like a stalled COMMIT.
  it.each([
    ['the COMMIT of a booking paid by gift card', 'COMMIT', 1, true],
    ["a plain booking's one statement", 'INSERT INTO bookings', 2, false],
  ])(
    'when %s stalls, then 503 within the bound, PostgreSQL settles the outcome within DB_TRANSACTION_TIMEOUT_MS, and a retry with the same Idempotency-Key answers with what committed',
    async (_case, marker, slotIndex, giftCard) => {
      // A longer idle-in-transaction timeout, so the stalled COMMIT reaches the server while its session lives.
      const { proxy, app } = await appBehindProxy(true, {
        DB_TRANSACTION_TIMEOUT_MS: '5000',
        REQUEST_TIMEOUT_MS: '7000',
      });
      const experience = escapeRoom();
      const slot = experience.slots[slotIndex]!;
      const ip = clientIp();
      const holdId = await placeHold(app, ip, experience, slot.id, 2);
      const body = {
        ...bookingBody(demo, experience, slot.id, holdId, 2),
        ...(giftCard && { gift_card_code: demo.gift_cards[0]!.code }),
      };
      const book = () =>
        request(app.app).post('/api/bookings').set('X-Forwarded-For', ip).set('Idempotency-Key', holdId).send(body);

      let stalledAt = 0;
      void proxy.freezeOn(marker).then(() => (stalledAt = Date.now()));
      const answer = await timed(book);

      expect(stalledAt).toBeGreaterThan(0);
      expectBounded503s([timedSince(answer, stalledAt)], QUERY_TIMEOUT_MS + MARGIN_MS);
      // The COMMIT was sent before the answer: it is in doubt until the server gets it or ends the session.
      proxy.resume();
      const committed = await waitUntil(
        async () => {
          const rows = await direct.deps.db.booking.findMany({ where: { holdId }, select: { id: true } });
          return rows.length > 0 && rows;
        },
        { timeoutMs: 5_000, what: 'the stalled COMMIT to land' },
      );
      expect(committed).toHaveLength(1);

      const retry = await book();
      expect([retry.status, retry.body.booking_id, retry.headers['idempotent-replayed']]).toEqual([
        201,
        committed[0]!.id,
        'true',
      ]);
    },
  );

  it('when a request outlives REQUEST_TIMEOUT_MS, then the deadline answers 503, and the handler answering later changes nothing and harms nothing', async () => {
    // Statements may run longer than the request here, so the deadline is what answers.
    const { proxy, app } = await appBehindProxy(true, { DB_STATEMENT_TIMEOUT_MS: '3000', REQUEST_TIMEOUT_MS: '1500' });
    expect((await widget(app)).status).toBe(200);

    proxy.freeze();
    const answer = await timed(() => widget(app));
    // The stalled query is answered now, after the deadline: the handler goes on and answers 200 to no one.
    proxy.resume();

    expectBounded503s([answer], 1_500 + MARGIN_MS);
    expect(answer.ms).toBeGreaterThanOrEqual(1_500 - 50);
    expect(answer.res.body.detail).toContain('1500 ms');
    // The late handler's answer has no one to observe it: let it run, then see the app is unharmed.
    await sleep(300);
    expect((await widget(app)).status).toBe(200);
  });
});
