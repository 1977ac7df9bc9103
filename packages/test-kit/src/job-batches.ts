/**
 * What a lifecycle worker does each tick: runs `batch` until one does nothing (at most 20 here, so
 * a job that never runs out of work fails the test); answers what the batches did in all.
 */
export async function untilDone(batch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (let batches = 1; batches <= 20; batches += 1) {
    const done = await batch();
    if (done === 0) return total;
    total += done;
  }
  throw new Error('the job never ran out of work');
}
