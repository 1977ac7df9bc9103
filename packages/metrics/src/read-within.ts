/**
 * What `reading` resolves to, or undefined if it fails or takes longer than `timeoutMs`. For
 * gauges read on a scrape from a connection that waits for ever while its backend is away (a
 * BullMQ worker's): the scrape then answers without them instead of hanging past Prometheus's
 * timeout and losing every other metric of the process.
 */
export async function readWithin<T>(reading: Promise<T>, timeoutMs: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)));
  try {
    return await Promise.race([reading.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
