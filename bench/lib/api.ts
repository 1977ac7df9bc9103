import { randomBytes, randomUUID } from 'node:crypto';
import type { Catalogue, Target } from './catalogue';
import { spawnNode, untilReady, type Child } from './children';
import type { Checkout } from './checkout';
import { freePort, sleep } from '@booking/test-kit';
import { HOLD_TTL_SECONDS, NO_LIMIT_PER_MINUTE, REDIS_URL } from './env';
import { cannon, CONNECTIONS, posts, roundRobin, type RequestSpec } from './load';
import { postJson } from './post-json';

export interface Api {
  url: string;
  child: Child;
}

/** A checkout's API process, and the catalogue its requests name (in that checkout's database). */
export interface CheckoutApi extends Catalogue {
  api: Api;
}

/** How a checkout's side of a scenario is labelled in the bench's progress lines. */
export const sideLabel = (name: string, checkout: Checkout) => `${name} [${checkout.label}]`;

/**
 * The checkout's API process (its own `apps/api/src/main.ts`), production settings, limits off;
 * `env` on top (TRUST_PROXY behind a proxy).
 */
export async function startApi(
  checkout: Checkout,
  databaseUrl: string,
  core?: number,
  env: Record<string, string> = {},
): Promise<Api> {
  const [port, metricsPort] = [await freePort(), await freePort()];
  const child = spawnNode(
    `api (${checkout.label}${core === undefined ? '' : `, core ${core}`})`,
    checkout.root,
    ['apps/api/src/main.ts'],
    {
      NODE_ENV: 'production',
      PORT: String(port),
      TOKEN_SIGNING_SECRET: randomBytes(32).toString('hex'),
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      LOG_LEVEL: 'warn',
      HOLD_TTL_SECONDS: String(HOLD_TTL_SECONDS),
      RATE_LIMIT_HOLDS_PER_MINUTE: String(NO_LIMIT_PER_MINUTE),
      RATE_LIMIT_BOOKINGS_PER_MINUTE: String(NO_LIMIT_PER_MINUTE),
      // Several APIs on one host: each its own metrics port.
      API_METRICS_PORT: String(metricsPort),
      ...env,
    },
    core,
  );
  child.metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const url = `http://127.0.0.1:${port}`;
  await untilReady(child, `${url}/readyz`);
  return { url, child };
}

export function holdBody(experienceId: string, slotId: string, seats = 1) {
  return { slot_id: slotId, experience_id: experienceId, seats };
}

/** POST /api/bookings/hold for 1 seat, cycling over `slots`, each with its Idempotency-Key. */
export function holdRequests(experienceId: string, slots: string[]): RequestSpec[] {
  const nextSlot = roundRobin(slots);
  return posts('/api/bookings/hold', () => holdBody(experienceId, nextSlot()), true);
}

/** POST /api/bookings, each request converting the next prepared hold. */
export function bookingRequests(bodies: object[]): RequestSpec[] {
  let i = 0;
  // Past the prepared holds a request still goes out, and counts as non-2xx.
  return posts('/api/bookings', () => bodies[i++] ?? { hold_id: randomUUID() }, false);
}

/** One hold; a 503 (an overloaded API sheds load) is tried again, up to 5 times in all. */
async function postHold(url: string, body: object): Promise<{ status: number; holdId?: string }> {
  for (let attempt = 1; ; attempt += 1) {
    const { status, answer } = await postJson<{ hold_id?: string }>(`${url}/api/bookings/hold`, body);
    if (status !== 503 || attempt === 5) return { status, holdId: answer.hold_id };
    await sleep(200);
  }
}

/**
 * Places `count` holds of 1 seat on `slotId` through the server at `url` (the API or the hold
 * ceiling), CONNECTIONS at a time, stopping at `timeLimitMs`; refused requests (an overloaded
 * API answers 503) are made up for. Returns how many were placed (fewer when time ran out).
 */
export async function pileUpHolds(
  url: string,
  experienceId: string,
  slotId: string,
  count: number,
  timeLimitMs: number,
): Promise<number> {
  const deadline = Date.now() + timeLimitMs;
  let placed = 0;
  while (placed < count && Date.now() < deadline) {
    const pile = await cannon({
      urls: [url],
      requests: holdRequests(experienceId, [slotId]),
      amount: count - placed,
      // autocannon refuses more connections than requests.
      connections: Math.min(CONNECTIONS, count - placed),
      timeLimitMs: deadline - Date.now(),
    });
    const ok = pile.statuses['200'] ?? 0;
    if (ok === 0) throw new Error(`piling up holds: no hold placed, ${JSON.stringify(pile.statuses)}`);
    placed += ok;
  }
  return placed;
}

/** Holds of 2 seats made through the API beforehand, and the booking bodies that convert them (1 guest). */
export async function prepareBookings(api: Api, target: Target, slots: string[], count: number): Promise<object[]> {
  const nextSlot = roundRobin(slots);
  const plan = Array.from({ length: count }, () => nextSlot());
  const bodies: object[] = [];
  let next = 0;
  const worker = async () => {
    while (next < plan.length) {
      const slotId = plan[next++]!;
      const { status, holdId } = await postHold(api.url, holdBody(target.experienceId, slotId, 2));
      if (status !== 200 || !holdId) throw new Error(`hold for the booking run failed: HTTP ${status}`);
      bodies.push(bookingBody(target, slotId, holdId));
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  return bodies;
}

/** A booking of one guest (of the two each bench hold takes, so it also hands a seat back). */
export function bookingBody(target: Target, slotId: string, holdId: string) {
  return {
    hold_id: holdId,
    slot_id: slotId,
    experience_id: target.experienceId,
    venue_id: target.venueId,
    guest_count: 1,
    customer: { email: `bench-${holdId}@example.com`, first_name: 'Bench' },
  };
}
