import type { DemoTenant } from '@booking/db';
import {
  deliverStripeEvent,
  type FakeInvoice,
  type FakeStripe,
  pendingRecurringMembership,
  signedBillingEvent,
  TEST_WEBHOOK_SECRET,
  type TestApp,
  untilDone,
} from '@booking/test-kit';
import { lifecycleJobs } from '../src/jobs/lifecycle-jobs';
import type { WorkerDeps } from '../src/jobs/worker-deps';
import { endUnpaidMemberships, GRACE_END_BATCH } from '../src/membership-billing/end-unpaid-memberships';
import {
  type BillingJobsWorld,
  hideSubscription,
  startBillingJobsWorld,
  stopBillingJobsWorld,
} from './support/billing-jobs-world';

// The grace job when it cannot end some memberships (Stripe will not show their subscriptions, or
// shows ones that leave them paused): more of them than a batch holds, oldest grace first, must
// not keep the membership behind them from ending. The job covers every tenant, so this file has
// a database of its own.

const RECONCILE_SECONDS = 3600;
/**
 * A test here sets up more memberships than a batch holds, each through three Stripe
 * notifications: 12 s alone on a 2-core host, past the default 30 s while the other suites run.
 */
const MANY_MEMBERSHIPS_MS = 120_000;

let fake: FakeStripe;
let t: TestApp;
let second: TestApp;
let demo: DemoTenant;
let world: BillingJobsWorld;

beforeAll(async () => {
  world = await startBillingJobsWorld(RECONCILE_SECONDS);
  ({ fake, t, second, demo } = world);
});
afterAll(() => stopBillingJobsWorld(world));

const membershipOf = (id: string) => t.deps.db.membership.findUniqueOrThrow({ where: { id } });
const readsOf = (subscriptionId: string) => fake.requestsTo('GET', `/v1/subscriptions/${subscriptionId}`).length;
const endedEvents = (membershipId: string) =>
  t.deps.db.event.count({ where: { entityId: membershipId, name: 'membership.ended' } });

async function deliver(name: 'invoice.paid' | 'invoice.payment_failed', invoice: FakeInvoice) {
  const event = signedBillingEvent(name, invoice, { secret: TEST_WEBHOOK_SECRET });
  expect((await deliverStripeEvent(t, event)).status).toBe(200);
}

/** Paid once, then its renewal's last retry failed: paused for payment, its grace over `minutesAgo`. */
async function graceOver(minutesAgo: number) {
  const m = await pendingRecurringMembership(t.deps.db, fake, demo.tenant.id);
  await deliver('invoice.paid', fake.billing.payFirstInvoice(m.subscriptionId).invoice as FakeInvoice);
  const { invoice } = fake.billing.cycle(m.subscriptionId, { outcome: 'failed', final: true });
  await deliver('invoice.payment_failed', invoice!);
  expect((await membershipOf(m.membershipId)).status).toBe('paused_for_payment');
  await t.deps.db.membership.update({
    where: { id: m.membershipId },
    data: { graceEndsAt: new Date(Date.now() - minutesAgo * 60_000) },
  });
  return m;
}

/**
 * Past its grace and paused for payment, with nothing the job can end it by: Stripe shows its
 * subscription paused (not at a pause request) and the invoice it owed paid since, which does not
 * resume a paused subscription. The job does not cancel a subscription whose newest invoice is
 * paid, and convergence keeps a paused subscription's membership paused for payment, so every
 * read leaves it as it is, and due. Its payment was handled, and the grace that restarted from
 * it has run out too.
 */
async function pausedAfterPaying(minutesAgo: number) {
  const m = await graceOver(minutesAgo);
  const subscription = fake.billing.subscriptions.get(m.subscriptionId)!;
  subscription.status = 'paused';
  const { invoice } = fake.billing.retryInvoice(subscription.latest_invoice!, { outcome: 'paid' });
  expect(fake.billing.subscriptions.get(m.subscriptionId)!.status).toBe('paused');
  await deliver('invoice.paid', invoice);
  expect((await membershipOf(m.membershipId)).status).toBe('paused_for_payment');
  await t.deps.db.membership.update({
    where: { id: m.membershipId },
    data: { graceEndsAt: new Date(Date.now() - minutesAgo * 60_000) },
  });
  return m;
}

/** One scheduled run of the grace job, as a worker pod runs it; whether it ended by itself. */
async function scheduledRun(app: TestApp, reconcileSeconds: number): Promise<boolean> {
  const config = { ...app.deps.config, memberships: { ...app.deps.config.memberships, reconcileSeconds } };
  const job = lifecycleJobs({ ...app.deps, config } as unknown as WorkerDeps).find(
    (j) => j.name === 'end-unpaid-memberships',
  )!;
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), 10_000);
  try {
    await job.handler({ signal: stop.signal } as Parameters<typeof job.handler>[0]);
  } finally {
    clearTimeout(timer);
  }
  return !stop.signal.aborted;
}

describe('grace job failures', () => {
  it(
    'when more memberships than a batch holds fail at Stripe every time, then the one behind them is ended in the same run, the run ends, and the failed ones are not tried again before MEMBERSHIP_RECONCILE_SECONDS and are after',
    async () => {
      // The failing ones' grace ran out first, so they head the queue.
      const failing = [];
      // More than a batch: the batch size is the job's own (a missing export would make this no test).
      expect(GRACE_END_BATCH).toBeGreaterThanOrEqual(10);
      for (let i = 0; i <= GRACE_END_BATCH; i += 1) failing.push(await graceOver(200 - i));
      expect(failing.length).toBeGreaterThan(GRACE_END_BATCH);
      const healthy = await graceOver(1);
      const shows = failing.map((m) => hideSubscription(fake, m.subscriptionId));
      const untried = new Map(failing.map((m) => [m.membershipId, readsOf(m.subscriptionId)]));

      // Two pods at once, with a zero interval: every batch outlasts it, as a slow Stripe would
      // make a batch outlast a short one. Each run still ends.
      const startedAt = Date.now();
      expect(await Promise.all([scheduledRun(t, 0), scheduledRun(second, 0)])).toEqual([true, true]);

      expect(await membershipOf(healthy.membershipId)).toMatchObject({ status: 'ended', endReason: 'payment_failed' });
      expect(fake.billing.subscriptions.get(healthy.subscriptionId)!.status).toBe('canceled');
      expect(await endedEvents(healthy.membershipId)).toBe(1);
      const tried = new Map<string, number>();
      for (const m of failing) {
        const reads = readsOf(m.subscriptionId) - untried.get(m.membershipId)!;
        // Once per pod at most: a run does not try again what it has tried.
        expect(reads).toBeGreaterThanOrEqual(1);
        expect(reads).toBeLessThanOrEqual(2);
        tried.set(m.membershipId, readsOf(m.subscriptionId));
        const membership = await membershipOf(m.membershipId);
        expect(membership.status).toBe('paused_for_payment');
        expect(membership.graceEndFailedAt!.getTime()).toBeGreaterThanOrEqual(startedAt);
      }

      // Stripe shows them again, but within MEMBERSHIP_RECONCILE_SECONDS of the failures: left alone.
      for (const show of shows) show();
      expect(
        await untilDone(() => endUnpaidMemberships(t.deps, new Date(startedAt + (RECONCILE_SECONDS - 60) * 1000))),
      ).toBe(0);
      for (const m of failing) expect(readsOf(m.subscriptionId)).toBe(tried.get(m.membershipId));

      // Once it has passed, each is tried again and ended, once.
      const later = new Date(Date.now() + (RECONCILE_SECONDS + 60) * 1000);
      expect(
        (
          await Promise.all([
            untilDone(() => endUnpaidMemberships(t.deps, later)),
            untilDone(() => endUnpaidMemberships(second.deps, later)),
          ])
        ).reduce((a, b) => a + b),
      ).toBeGreaterThanOrEqual(failing.length);
      for (const m of failing) {
        expect(readsOf(m.subscriptionId)).toBeGreaterThan(tried.get(m.membershipId)!);
        expect(await membershipOf(m.membershipId)).toMatchObject({ status: 'ended', endReason: 'payment_failed' });
        expect(await endedEvents(m.membershipId)).toBe(1);
      }
    },
    MANY_MEMBERSHIPS_MS,
  );

  it(
    'when more memberships than a batch holds are read from Stripe but stay paused for payment, then the one behind them is ended in the same run, the run ends, and the paused ones are stamped',
    async () => {
      // Their grace ran out first, so they head the queue.
      const paused = [];
      for (let i = 0; i <= GRACE_END_BATCH; i += 1) paused.push(await pausedAfterPaying(200 - i));
      expect(paused.length).toBeGreaterThan(GRACE_END_BATCH);
      const healthy = await graceOver(1);
      const unread = new Map(paused.map((m) => [m.membershipId, readsOf(m.subscriptionId)]));

      const startedAt = Date.now();
      expect(await scheduledRun(t, RECONCILE_SECONDS)).toBe(true);

      expect(await membershipOf(healthy.membershipId)).toMatchObject({ status: 'ended', endReason: 'payment_failed' });
      expect(await endedEvents(healthy.membershipId)).toBe(1);
      for (const m of paused) {
        // Stripe answered, once, and the job left the subscription as it was.
        expect(readsOf(m.subscriptionId) - unread.get(m.membershipId)!).toBe(1);
        expect(fake.requestsTo('DELETE', `/v1/subscriptions/${m.subscriptionId}`)).toHaveLength(0);
        expect(fake.billing.subscriptions.get(m.subscriptionId)!.status).toBe('paused');
        const membership = await membershipOf(m.membershipId);
        expect(membership.status).toBe('paused_for_payment');
        expect(membership.graceEndsAt!.getTime()).toBeLessThan(startedAt);
        expect(membership.graceEndFailedAt!.getTime()).toBeGreaterThanOrEqual(startedAt);
        expect(await endedEvents(m.membershipId)).toBe(0);
      }
    },
    MANY_MEMBERSHIPS_MS,
  );
});
