import path from 'node:path';
import type { DemoTenant } from '@booking/db';
import {
  createIsolatedDatabase,
  createTestApp,
  freePort,
  heldBooking,
  killAllServiceProcesses,
  seedMembership,
  seedMembershipPlan,
  seedTenant,
  sleep,
  startServiceProcess,
  waitUntil,
  type TestApp,
} from '@booking/test-kit';
import { Queue } from 'bullmq';
import { LIFECYCLE_QUEUE } from '../src/jobs/lifecycle-jobs';
import { ANY_TENANT, lockWallet } from '../src/locks';
import { openWallet } from '../src/wallets/open-wallet';
import { creditWallet } from '../src/wallets/wallet-ledger';

// The lifecycle worker as its own OS process (`pnpm start:worker`). The expiry job covers every
// tenant, so this file has a database and a queue prefix of its own.
describe('the lifecycle worker process', () => {
  let isolated: Awaited<ReturnType<typeof createIsolatedDatabase>>;
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    isolated = await createIsolatedDatabase();
    t = createTestApp({ ...isolated.env, HOLD_TTL_SECONDS: '1' });
    demo = await seedTenant(t.deps);
  });
  afterAll(async () => {
    await killAllServiceProcesses();
    const queue = new Queue(LIFECYCLE_QUEUE, { connection: t.deps.queueRedis, prefix: isolated.env.QUEUE_PREFIX });
    await queue.obliterate({ force: true });
    await queue.close();
    await t.close();
    await isolated.drop();
  });

  it('when a held booking outlives its hold and grace unpaid, then the worker cancels it; the refund, order and wallet jobs run too; and SIGTERM stops the worker cleanly', async () => {
    const held = await heldBooking(t, demo, { guests: 1 });
    const status = async () => (await t.deps.db.booking.findUniqueOrThrow({ where: { id: held.booking_id } })).status;
    await sleep(2_500); // the hold (1 s) and the grace (1 s) run out; the API itself cancels nothing
    expect(await status()).toBe('held');

    // Wallet value whose lot expired a minute ago.
    const customer = await t.deps.db.customer.create({
      data: { tenantId: demo.tenant.id, email: 'expiring@example.com', firstName: 'Eve' },
    });
    const walletId = await t.deps.db.$transaction(async (tx) => {
      const id = await openWallet(tx, { tenantId: demo.tenant.id, customerId: customer.id, currency: 'USD' });
      const wallet = (await lockWallet(tx, ANY_TENANT, id))!;
      await creditWallet(tx, wallet, {
        kind: 'fund',
        source: 'pos_load',
        amountCents: 900,
        expiresAt: new Date(Date.now() - 60_000),
      });
      return id;
    });

    // A fixed-term membership whose term ended a minute ago.
    const membershipPlan = await seedMembershipPlan(t.deps.db, demo.tenant.id);
    const membership = await seedMembership(t.deps.db, membershipPlan, { expiresAt: new Date(Date.now() - 60_000) });

    const healthPort = await freePort();
    const worker = await startServiceProcess({
      name: 'lifecycle worker',
      entry: path.join('apps', 'api', 'src', 'jobs', 'worker-main.ts'),
      env: {
        ...isolated.env,
        UNPAID_BOOKING_EXPIRY_SECONDS: '1',
        UNPAID_BOOKING_SWEEP_SECONDS: '1',
        ORDER_SWEEP_SECONDS: '1',
        WALLET_EXPIRY_SWEEP_SECONDS: '1',
        MEMBERSHIP_SWEEP_SECONDS: '1',
        WORKER_HEALTH_PORT: String(healthPort),
        LOG_LEVEL: 'info',
      },
      readyUrl: `http://127.0.0.1:${healthPort}/healthz`,
    });
    const logged = () => worker.output.flatMap(jsonLine);

    const run = await waitUntil(
      () => logged().find((entry) => entry.job === 'expire-unpaid-bookings' && entry.cancelled === 1),
      { timeoutMs: 15_000, what: () => `the worker to cancel the booking:\n${worker.output.join('\n')}` },
    );

    expect(run.msg).toBe('scheduled job done');
    expect(await status()).toBe('cancelled');
    const cancelled = await t.deps.db.event.findMany({
      where: { entityId: held.booking_id, name: 'booking.cancelled' },
    });
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]!.data).toMatchObject({ cancelled_by_user_id: null, reason: 'unpaid_hold_expired' });

    // The refund, order and wallet jobs run in the same process.
    for (const job of ['settle-stuck-booking-refunds', 'settle-stuck-order-refunds']) {
      await waitUntil(() => logged().find((entry) => entry.job === job && entry.msg === 'scheduled job done'), {
        timeoutMs: 15_000,
        what: `${job} to run`,
      });
    }
    await waitUntil(() => logged().find((entry) => entry.job === 'cancel-unpaid-orders'), {
      timeoutMs: 15_000,
      what: 'the unpaid-order job to run',
    });
    await waitUntil(() => logged().find((entry) => entry.job === 'void-abandoned-orders'), {
      timeoutMs: 15_000,
      what: 'the abandoned-order job to run',
    });
    await waitUntil(() => logged().find((entry) => entry.job === 'expire-wallet-funds' && entry.expired === 1), {
      timeoutMs: 15_000,
      what: 'the wallet expiry job to expire the lot',
    });
    const expired = await t.deps.db.event.findMany({ where: { entityId: walletId, name: 'wallet.expired' } });
    expect(expired.map((event) => (event.data as { expired_cents: number }).expired_cents)).toEqual([900]);

    // The membership jobs run there too.
    await waitUntil(() => logged().find((entry) => entry.job === 'expire-memberships' && entry.expired === 1), {
      timeoutMs: 15_000,
      what: 'the membership expiry job to expire the membership',
    });
    expect(await t.deps.db.event.count({ where: { entityId: membership.id, name: 'membership.expired' } })).toBe(1);
    for (const job of ['start-freezes', 'end-freezes']) {
      await waitUntil(() => logged().find((entry) => entry.job === job), { timeoutMs: 15_000, what: `${job} to run` });
    }

    await worker.stop(10_000);
    expect(await worker.exited).toBe('exit 0');
    expect(logged().map((entry) => entry.msg)).toContain('lifecycle worker stopped');
  }, 90_000);

  it('when the API asks for a job at an exact moment, then the worker runs it then, not at its next tick an hour away', async () => {
    const healthPort = await freePort();
    const worker = await startServiceProcess({
      name: 'lifecycle worker (exact moments)',
      entry: path.join('apps', 'api', 'src', 'jobs', 'worker-main.ts'),
      env: {
        ...isolated.env,
        ORDER_SWEEP_SECONDS: '3600',
        WORKER_HEALTH_PORT: String(healthPort),
        LOG_LEVEL: 'info',
      },
      readyUrl: `http://127.0.0.1:${healthPort}/healthz`,
    });
    // Every line it logs (its output keeps only the last few).
    let logged = '';
    worker.child.stdout!.on('data', (chunk: Buffer) => (logged += chunk.toString('utf8')));
    let stopped = false;
    try {
      // Made once the worker runs, so no tick of its start (the schedule changed) can be what
      // cancels the order.
      const customer = await t.deps.db.customer.create({
        data: { tenantId: demo.tenant.id, email: 'exact-moment@example.com', firstName: 'Ada' },
      });
      const walletId = await t.deps.db.$transaction((tx) =>
        openWallet(tx, { tenantId: demo.tenant.id, customerId: customer.id, currency: 'USD' }),
      );
      const payBy = new Date(Date.now() + 3_000);
      // An online top-up whose payment window closes in three seconds (its PaymentIntent was never made).
      const order = await t.deps.db.order.create({
        data: {
          tenantId: demo.tenant.id,
          channel: 'online',
          kind: 'wallet_topup',
          status: 'pending_payment',
          customerId: customer.id,
          walletId,
          currency: 'USD',
          totalCents: 2_000,
          payBy,
        },
      });
      // Asked twice, as a retried request would: one run.
      await t.deps.lifecycle.runAt('cancel-unpaid-orders', payBy, `order-${order.id}`);
      await t.deps.lifecycle.runAt('cancel-unpaid-orders', payBy, `order-${order.id}`);

      const cancelled = await waitUntil(
        async () => {
          const row = await t.deps.db.order.findUniqueOrThrow({ where: { id: order.id } });
          return row.status === 'cancelled' && row;
        },
        { timeoutMs: 15_000, what: () => `the exact-moment run to cancel the order:\n${worker.output.join('\n')}` },
      );
      expect(cancelled.cancelledAt!.getTime()).toBeGreaterThanOrEqual(payBy.getTime());
      // Every run of the job asked for that moment, whatever it found to do (a second run would
      // find the order cancelled already and log `cancelled: 0`), counted once the worker has
      // stopped, which waits for a running job.
      await worker.stop(10_000);
      stopped = true;
      const runs = logged
        .split('\n')
        .flatMap(jsonLine)
        .filter(
          (entry) => entry.msg === 'scheduled job done' && entry.jobId === `cancel-unpaid-orders-order-${order.id}`,
        );
      expect(runs.map((entry) => entry.cancelled)).toEqual([1]);
    } finally {
      if (!stopped) await worker.stop(10_000);
    }
  }, 90_000);
});

/** A log line as an object; none for other output, or a line cut short by the output buffer. */
function jsonLine(line: string): Record<string, unknown>[] {
  try {
    return [JSON.parse(line) as Record<string, unknown>];
  } catch {
    return [];
  }
}
