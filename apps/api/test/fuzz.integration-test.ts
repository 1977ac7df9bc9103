import type { DemoTenant } from '@booking/db';
import { ERROR_STATUSES } from '../src/http/error-statuses';
import fc from 'fast-check';
import request, { type Response } from 'supertest';
import {
  bearer,
  clientIp,
  confirmedBooking,
  createBooking,
  createTestApp,
  kayak,
  placeHold,
  seedTenant,
  type TestApp,
} from '@booking/test-kit';
import { brokenInvariants } from './support/fuzz-invariants';
import { caseFor, operationsOf, type FuzzCase, type Known, type Operation } from './support/fuzz-inputs';

// Property-based fuzzing of every path and method the served OpenAPI document lists: malformed
// paths, bodies, headers and text, half of them with a valid tenant key. No answer may be a
// 5xx, every 4xx is the Error shape with a documented code and its status, an operator route
// never says 2xx without a key, and the tenant's data keeps its invariants afterwards.
//
// Reproducible: FUZZ_SEED picks the run (the seed is printed and in the test name); FUZZ_RUNS
// is the number of requests per operation. Payments are not configured here, so 503
// payments_not_configured is the one 5xx allowed: the documented answer of that state.

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
const RUNS_PER_OPERATION = Number(process.env.FUZZ_RUNS ?? 30);
/** The whole run's time budget; each operation gets its share and stops generating after it. */
const BUDGET_MS = 40_000;
const REQUEST_TIMEOUT_MS = 5_000;
/**
 * An operation's share never ends before one request could have timed out: the limit cuts the
 * request in flight, and fast-check counts an operation interrupted before its first answer as
 * failed, so on a loaded machine one slow first answer (CI saw 0.5 s) failed the whole run.
 */
const OPERATION_FLOOR_MS = REQUEST_TIMEOUT_MS + 1_000;

const KNOWN_CODES = new Set(Object.keys(ERROR_STATUSES));

/** The healthy answer of brokenInvariants: every rule with no rows breaking it. */
const noneBroken = (rules: Record<string, unknown[]>) =>
  Object.fromEntries(Object.keys(rules).map((rule) => [rule, []]));

interface Failure {
  operation: string;
  seed: number;
  counterexample: unknown;
  problem: string;
}

/** What is wrong with an answer, if anything. */
function problemWith(operation: Operation, fuzzCase: FuzzCase, res: Response): string | undefined {
  const body = res.body as { error?: unknown; detail?: unknown } | undefined;
  if (res.status === 503 && body?.error === 'payments_not_configured') return undefined;
  if (res.status >= 500) return `${res.status} ${res.text.slice(0, 300)}`;
  if (res.status >= 400) {
    if (!/^application\/json/.test(String(res.headers['content-type']))) return `${res.status} is not JSON`;
    if (typeof body?.error !== 'string') return `${res.status} without a string error: ${res.text.slice(0, 300)}`;
    if (!KNOWN_CODES.has(body.error)) return `${res.status} with the undocumented code ${body.error}`;
    if (ERROR_STATUSES[body.error as keyof typeof ERROR_STATUSES] !== res.status) {
      return `${body.error} answered with ${res.status}, not its documented status`;
    }
    const extra = Object.keys(body).filter((key) => key !== 'error' && key !== 'detail');
    if (extra.length > 0) return `the Error shape has extra fields ${extra.join(', ')}`;
    return undefined;
  }
  if (operation.requiresKey && !fuzzCase.authenticated && res.status < 300) {
    return `an operator route answered ${res.status} without a valid key`;
  }
  return undefined;
}

describe(`fuzzing every operation of the OpenAPI document (FUZZ_SEED=${SEED})`, () => {
  let t: TestApp;
  let demo: DemoTenant;
  let known: Known;

  /** Real ids and credentials of a fresh tenant, for the fuzzer to aim at. */
  async function knownOfTenant(): Promise<Known> {
    const { experience } = kayak(demo);
    const confirmed = await confirmedBooking(t, demo, { experience, slotIndex: 0, guests: 1 });
    const held = await createBooking(t, demo, { experience, slotIndex: 1, guests: 1 });
    const freeHolds = [
      await placeHold(t, clientIp(), experience, experience.slots[0]!.id, 2),
      await placeHold(t, clientIp(), experience, experience.slots[3]!.id, 1),
    ];
    const endpoint = await request(t.app)
      .post('/api/webhooks/endpoints')
      .set('Authorization', bearer(demo.api_keys.admin))
      .send({ url: 'https://hooks.example.com/fuzz' });
    const shift = await request(t.app)
      .post('/api/pos/shifts/open')
      .set('Authorization', bearer(demo.api_keys.manager))
      .send({ starting_cash_cents: 0 });
    const booking = await t.deps.db.booking.findUniqueOrThrow({ where: { id: held.booking_id } });
    // The kayak needs a waiver: the last segment of its waiver_url is the guest's signed token.
    const waiverToken = new URL(held.waiver_url!).pathname.split('/').pop()!;
    const slots = demo.experiences.flatMap((e) => e.slots.map((slot) => slot.id));
    const byName: Record<string, string[]> = {
      hold_id: [...freeHolds, confirmed.holdId, held.holdId],
      slot_id: slots,
      experience_id: demo.experiences.map((e) => e.id),
      venue_id: [demo.venue_id],
      booking_id: [confirmed.booking_id, held.booking_id],
      shift_id: [shift.body.shift_id],
      addon_id: demo.experiences.flatMap((e) => e.addons.map((addon) => addon.id)),
      gift_card_code: demo.gift_cards.map((card) => card.code),
      currency: [experience.currency],
      tenant: [demo.tenant.slug],
      experience: demo.experiences.map((e) => e.slug),
      starting_after: [booking.customerId],
      token: [waiverToken],
    };
    return {
      byName,
      ids: [confirmed.booking_id, held.booking_id, booking.customerId, endpoint.body.id, shift.body.shift_id],
      // Admin twice: it passes every role check, so most authenticated cases reach the use case.
      apiKeys: [demo.api_keys.admin, demo.api_keys.admin, demo.api_keys.manager, demo.api_keys.staff],
      bookingTokens: [confirmed.booking_token, held.booking_token],
      manageTokens: [confirmed.manage_token, held.manage_token],
    };
  }

  function send(operation: Operation, fuzzCase: FuzzCase): Promise<Response> {
    const agent = request(t.app);
    const req = agent[operation.method](fuzzCase.url)
      .timeout(REQUEST_TIMEOUT_MS)
      // Each request its own client address: a rate limit must not hide the answers behind 429s.
      .set({ ...fuzzCase.headers, 'X-Forwarded-For': clientIp() });
    return fuzzCase.body === undefined ? req : req.send(fuzzCase.body);
  }

  beforeAll(async () => {
    t = createTestApp();
    demo = await seedTenant(t.deps);
    known = await knownOfTenant();
  });
  afterAll(() => t.close());

  it('answers no 5xx and only documented 4xx Error shapes, and leaves the data consistent', async () => {
    const started = Date.now();
    const doc = await request(t.app).get('/api/openapi.json');
    expect(doc.status).toBe(200);
    const operations = operationsOf(doc.body);
    expect(operations.length).toBeGreaterThan(30);
    const before = await brokenInvariants(t.deps.db, demo.tenant.id);
    expect(before).toEqual(noneBroken(before));

    const failures: Failure[] = [];
    const statuses = new Map<number, number>();
    let requests = 0;
    let paymentsNotConfigured = 0;
    let otherServerErrors = 0;
    for (const [index, operation] of operations.entries()) {
      const name = `${operation.method.toUpperCase()} ${operation.path}`;
      const seed = SEED + index;
      const details = await fc.check(
        fc.asyncProperty(caseFor(operation, known), async (fuzzCase) => {
          const res = await send(operation, fuzzCase).catch((error: Error) => error);
          requests += 1;
          if (res instanceof Error) throw new Error(`no answer: ${res.message}`);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.body?.error === 'payments_not_configured') paymentsNotConfigured += 1;
          else if (res.status >= 500) otherServerErrors += 1;
          const problem = problemWith(operation, fuzzCase, res);
          if (problem) throw new Error(problem);
        }),
        {
          seed,
          numRuns: RUNS_PER_OPERATION,
          // No shrinking: the server's state moves on with every request, so a shrunk case
          // would not replay the failure; the seed and the case itself are what reproduce it.
          endOnFailure: true,
          plugins: [fc.interruptAfterTimeLimit(Math.max(BUDGET_MS / operations.length, OPERATION_FLOOR_MS))],
        },
      );
      if (details.failed) {
        failures.push({
          operation: name,
          seed,
          counterexample: (details.counterexample as [FuzzCase] | null)?.[0],
          problem:
            details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance),
        });
      }
    }

    const broken = await brokenInvariants(t.deps.db, demo.tenant.id);
    console.log(
      JSON.stringify({
        fuzz: {
          seed: SEED,
          operations: operations.length,
          requests,
          statuses: Object.fromEntries([...statuses].sort(([a], [b]) => a - b)),
          payments_not_configured: paymentsNotConfigured,
          other_5xx: otherServerErrors,
          failures: failures.length,
          ms: Date.now() - started,
        },
      }),
    );
    expect(failures).toEqual([]);
    expect(broken).toEqual(noneBroken(broken));
  }, 180_000);
});
