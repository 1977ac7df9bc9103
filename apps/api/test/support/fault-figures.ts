import type { Response } from 'supertest';

/** A response and how long it took, in milliseconds. */
export interface Timed {
  res: Response;
  ms: number;
}

/** Sends a request (a supertest Test, which runs once awaited) and times it. */
export async function timed(send: () => PromiseLike<Response>): Promise<Timed> {
  const started = Date.now();
  const res = await send();
  return { res, ms: Date.now() - started };
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
