import type { DemoTenant } from '@booking/db';
import {
  createIsolatedDatabase,
  createTestApp,
  type FakeStripe,
  seedTenant,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  type TestApp,
} from '@booking/test-kit';

// What the membership billing job tests share. The jobs cover every tenant, so each such file has a
// database of its own, a fake Stripe, and two apps on separate connection pools, as two worker
// pods would run the jobs.

export interface BillingJobsWorld {
  isolated: Awaited<ReturnType<typeof createIsolatedDatabase>>;
  fake: FakeStripe;
  t: TestApp;
  second: TestApp;
  demo: DemoTenant;
}

export async function startBillingJobsWorld(reconcileSeconds: number): Promise<BillingJobsWorld> {
  const isolated = await createIsolatedDatabase();
  const fake = await startFakeStripe();
  const env = { ...isolated.env, ...stripeEnv(fake.url), MEMBERSHIP_RECONCILE_SECONDS: String(reconcileSeconds) };
  const t = createTestApp(env);
  const second = createTestApp(env);
  return { isolated, fake, t, second, demo: await seedTenant(t.deps) };
}

export async function stopBillingJobsWorld(world: BillingJobsWorld): Promise<void> {
  await world.second.close();
  await world.t.close();
  await stopFakeStripe(world.fake);
  await world.isolated.drop();
}

/** Stripe answers 404 for the subscription until the returned function is called. */
export function hideSubscription(fake: FakeStripe, subscriptionId: string): () => void {
  const subscription = fake.billing.subscriptions.get(subscriptionId)!;
  fake.billing.subscriptions.delete(subscriptionId);
  return () => fake.billing.subscriptions.set(subscriptionId, subscription);
}
