import type { TestApp } from './app';
import { waitUntil } from './wait';

/**
 * Resolves once Redis's clock, the one every replica measures holds on, is past `expiresAt`
 * (epoch ms): from then on the hold is dead everywhere. Waiting on that clock rather than
 * sleeping the TTL keeps tests from racing the expiry.
 */
export function holdExpired(t: TestApp, expiresAt: number, timeoutMs = 5_000): Promise<true> {
  return waitUntil(async () => (await redisNow(t)) > expiresAt, {
    timeoutMs,
    intervalMs: 100,
    what: `Redis's clock to pass the hold expiry ${new Date(expiresAt).toISOString()}`,
  });
}

/** Redis's clock in epoch ms (the tests' Redis is a single node: the clock every hold was placed by). */
export async function redisNow(t: TestApp): Promise<number> {
  const [seconds, micros] = await t.deps.redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
