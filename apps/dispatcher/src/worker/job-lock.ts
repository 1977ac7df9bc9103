/**
 * The shortest job lock whatever the request timeout: room for the database work around the
 * request, and for a busy event loop (a live worker renews the lock every half of it).
 */
const MIN_LOCK_MS = 10_000;

/**
 * How long a worker's hold on a job lasts without renewal: three request timeouts (30 s with the
 * default 10 s timeout), never less than 10 s, so it always outlives an attempt and only a dead
 * (or frozen) worker loses it. The stalled-job check runs every half lock (BullMQ's default is a
 * fixed 30 s) and hands such a job to another worker, which sends it again with the same delivery
 * id: a killed dispatcher's deliveries resume within a lock and a half of its death, 15 s with a
 * 3 s timeout (the crash test counts on it), 45 s with the default.
 */
export function jobLockMs(timeoutMs: number): { lockDuration: number; stalledInterval: number } {
  const lockDuration = Math.max(MIN_LOCK_MS, timeoutMs * 3);
  return { lockDuration, stalledInterval: Math.ceil(lockDuration / 2) };
}
