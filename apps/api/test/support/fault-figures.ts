import type { Response } from 'supertest';

/**
 * Room for the test's own scheduling on top of a timeout. On a busy two-core machine (the file's
 * own API, proxies and Redis processes, other work beside the tests) an answer bounded by 1.0 s
 * of timeouts once took 2.4 s; the bounds still tell a bounded answer from a hang, which is what
 * they are for.
 */
export const MARGIN_MS = 1_000;

/** A response, how long it took and when it ended, in milliseconds. */
export interface Timed {
  res: Response;
  ms: number;
  endedAt: number;
}

/** Sends a request (a supertest Test, which runs once awaited) and times it. */
export async function timed(send: () => PromiseLike<Response>): Promise<Timed> {
  const started = Date.now();
  const res = await send();
  const endedAt = Date.now();
  return { res, ms: endedAt - started, endedAt };
}

/**
 * The same answer timed from `since` (the moment a stall began) rather than from the request's
 * start, so the bound covers the timeout alone and not the statements that ran before the stall.
 */
export function timedSince(answer: Timed, since: number): Timed {
  return { ...answer, ms: answer.endedAt - since };
}

/** Sends `count` requests at once and times each. */
export function timedAll(count: number, send: (index: number) => PromiseLike<Response>): Promise<Timed[]> {
  return Promise.all(Array.from({ length: count }, (_, index) => timed(() => send(index))));
}

/** Every answer is 503 in the spec's Error shape, and none took `boundMs` or more. */
export function expectBounded503s(answers: Timed[], boundMs: number): void {
  for (const { res, ms } of answers) {
    expect([res.status, res.body.error]).toEqual([503, 'service_unavailable']);
    expect(Object.keys(res.body).every((key) => key === 'error' || key === 'detail')).toBe(true);
    expect(ms).toBeLessThan(boundMs);
  }
}
