import { randomInt } from 'node:crypto';
import type { LookupAll } from '@booking/address-policy';
import { createApp } from '@booking/api/src/app';
import { closeAppDeps, createAppDeps, type AppDeps } from '@booking/api/src/app-deps';
import { loadConfig } from '@booking/config';
import { seedDemoTenant, type DemoTenant } from '@booking/db';
import { hostsTableLookup } from './hosts-table-lookup';
import { withResponseConformance } from './response-conformance';

export interface TestApp {
  app: ReturnType<typeof createApp>;
  deps: AppDeps;
  close: () => Promise<void>;
}

/**
 * Settings for an app whose requests give up after 1 s (503) and whose Idempotency-Keys leave
 * flight 2 s after their claim, the shortest the settings allow around that deadline: a test can
 * retry once a first run has given up, as a client's later retry would.
 */
export const SHORT_DEADLINE_ENV: Record<string, string> = {
  REQUEST_TIMEOUT_MS: '1000',
  DB_CONNECT_TIMEOUT_MS: '500',
  DB_TRANSACTION_TIMEOUT_MS: '500',
  IDEMPOTENCY_IN_FLIGHT_SECONDS: '2',
};

/**
 * The real app in-process, on the real PostgreSQL and Redis, with every answer checked against
 * the OpenAPI document (see response-conformance). It trusts one proxy hop so each test can
 * present its own client address (see `clientIp`) and never share a rate-limit budget with
 * another test. Receiver host names resolve through `lookupHost` (by default only `localhost`),
 * never through DNS.
 */
export function createTestApp(env: Record<string, string> = {}, options: { lookupHost?: LookupAll } = {}): TestApp {
  const config = loadConfig({ ...process.env, TRUST_PROXY: '1', ...env });
  const deps: AppDeps = { ...createAppDeps(config), lookupHost: options.lookupHost ?? hostsTableLookup() };
  return { app: withResponseConformance(createApp(deps)), deps, close: () => closeAppDeps(deps) };
}

/**
 * A client address out of 16 million (11.0.0.0/8, only ever a header value here). Rate limits are
 * per address and their counters are shared in Redis by every test of a run: among 65,000
 * addresses, a CI run drew for a booking test one that another test had used up (429).
 */
export function clientIp(): string {
  return `11.${randomInt(0, 256)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
}

/** A fresh demo tenant (venue, two experiences with slots, gift cards, API keys) of its own. */
export function seedTenant(deps: AppDeps): Promise<DemoTenant> {
  return seedDemoTenant(deps.db);
}

/** The first bookable slot of the demo's first experience (waiver required, party 1..12, capacity 24). */
export function kayak(demo: DemoTenant) {
  const experience = demo.experiences[0]!;
  return { experience, slot: experience.slots[0]!, peakSlot: experience.slots[2]! };
}
