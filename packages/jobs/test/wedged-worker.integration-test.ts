import { randomUUID } from 'node:crypto';
import { createLogger } from '@booking/logging';
import { sleep, waitUntil } from '@booking/test-kit';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { selfHealingWorker, type SelfHealingWorker } from '../src';

// A wedged worker is alive and takes nothing. The stand-in here is a real BullMQ worker that was
// never started (`autorun: false`): from Redis it looks the same as one whose blocking connection
// a failover wedged (test/cluster shows the real thing end to end).

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const NAME = 'wedge-watch';
const WEDGED_AFTER_MS = 600;
const CHECK_EVERY_MS = 100;
const logger = createLogger('silent', 'jobs-test');

let prefix: string;
let connection: Redis;
let queue: Queue;
let workers: Worker[];
let healing: SelfHealingWorker<unknown> | undefined;

beforeEach(() => {
  prefix = `test-wedge-${randomUUID()}`;
  connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  queue = new Queue(NAME, { connection, prefix });
  workers = [];
  healing = undefined;
});

afterEach(async () => {
  await healing?.stop(1_000);
  await Promise.all(workers.map((worker) => worker.close(true)));
  await queue.obliterate({ force: true });
  await queue.close();
  await connection.quit();
});

/** Workers made by `selfHealingWorker`, in order: the first `wedged` of them take nothing. */
function starter(ran: string[], wedged: number): () => Worker {
  return () => {
    const worker = new Worker(NAME, async (job) => void ran.push(job.id!), {
      connection,
      prefix,
      autorun: workers.length >= wedged,
    });
    workers.push(worker);
    return worker;
  };
}

function watch(start: () => Worker, hasFreeSlot = () => true): SelfHealingWorker<unknown> {
  healing = selfHealingWorker({
    queue,
    start,
    hasFreeSlot,
    logger,
    what: 'test worker',
    wedgedAfterMs: WEDGED_AFTER_MS,
    checkEveryMs: CHECK_EVERY_MS,
  });
  return healing;
}

describe('selfHealingWorker', () => {
  it('when its worker takes no waiting job while it has a free slot, then a new worker replaces it and runs the job', async () => {
    const ran: string[] = [];
    const healed = watch(starter(ran, 1));
    const wedged = healed.current();
    await queue.add('tick', {}, { jobId: 'waiting-1' });
    const addedAt = performance.now();

    await waitUntil(() => ran.length === 1, {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: () => 'the waiting job to run',
    });
    expect(ran).toEqual(['waiting-1']);
    // Not before the job had waited a whole window: a worker between two polls is not wedged.
    expect(performance.now() - addedAt).toBeGreaterThanOrEqual(WEDGED_AFTER_MS);
    expect(workers).toHaveLength(2);
    expect(healed.current()).toBe(workers[1]);
    expect(healed.current()).not.toBe(wedged);
    // The wedged worker is closed, so it can never take a job beside its replacement.
    await waitUntil(() => wedged.closing !== undefined, {
      timeoutMs: 5_000,
      intervalMs: 50,
      what: () => 'the replaced worker to close',
    });
  });

  it('when its worker has no free slot, then it is not suspected however long a job waits', async () => {
    const ran: string[] = [];
    const healed = watch(starter(ran, 1), () => false);
    const busy = healed.current();
    await queue.add('tick', {}, { jobId: 'waiting-2' });

    await sleep(WEDGED_AFTER_MS * 3); // several windows in which a free slot would have been replaced
    expect(workers).toEqual([busy]);
    expect(healed.current()).toBe(busy);
    expect(await queue.getJobState('waiting-2')).toBe('waiting');
  });

  it('when its worker takes jobs as they come, then it is never replaced', async () => {
    const ran: string[] = [];
    const healed = watch(starter(ran, 0));
    const live = healed.current();
    const ids = Array.from({ length: 40 }, (_, i) => `steady-${i}`);
    for (const jobId of ids) {
      await queue.add('tick', {}, { jobId });
      await sleep(WEDGED_AFTER_MS / 10); // a steady trickle over three wedge windows
    }

    await waitUntil(() => ran.length === ids.length, {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: () => 'every job to run',
    });
    expect(ran.sort()).toEqual([...ids].sort());
    expect(workers).toEqual([live]);
    expect(healed.current()).toBe(live);
  });
});
