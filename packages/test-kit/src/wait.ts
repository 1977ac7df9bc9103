/** How long `waitUntil` keeps trying, how often, and what it is waiting for (named in the error). */
export interface WaitOptions {
  /** Give up after this long. Default 10 000 ms. */
  timeoutMs?: number;
  /** Pause between two checks. Default 50 ms. */
  intervalMs?: number;
  /**
   * What the test waits for, as the timeout error should say it. A function is called only on
   * timeout, so it can describe the state the wait gave up on.
   */
  what: string | (() => string);
}

/**
 * Checks `check` until it returns something other than `false`, `null` or `undefined`, and
 * returns that. Tests wait on a state (a row, a count, a received request) with this, never with
 * a fixed sleep: it is as quick as the system and fails with what it was waiting for.
 */
export async function waitUntil<T>(
  check: () => T | false | null | undefined | Promise<T | false | null | undefined>,
  options: WaitOptions,
): Promise<T> {
  const { timeoutMs = 10_000, intervalMs = 50, what } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== false && value !== null && value !== undefined) return value;
    if (Date.now() >= deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
    }
    await sleep(intervalMs);
  }
}

/**
 * Lets time pass. Only for waits where the passing of time is the point: a TTL running out, or a
 * window in which something must NOT happen. Say which at the call.
 */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * `work`, or a rejection naming `what` once `ms` have passed: for a promise that must settle in
 * time (an answer, a socket closing) and would otherwise hang the test. The timer never outlives
 * the race.
 */
export function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not settled within ${ms} ms`)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
