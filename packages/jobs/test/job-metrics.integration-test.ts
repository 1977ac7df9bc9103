import { randomUUID } from 'node:crypto';
import { createLogger } from '@booking/logging';
import { metricValue, waitUntil } from '@booking/test-kit';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { startScheduledJobs, type ScheduledJobs } from '../src';

// Job metrics of startScheduledJobs on the real Redis: a queue prefix of its own, deleted after.

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUEUE = 'metrics-jobs';
const logger = createLogger('silent', 'job-metrics-test');

describe('scheduled job metrics', () => {
  const prefix = `test-job-metrics-${randomUUID()}`;
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const registry = new Registry();
  let jobs: ScheduledJobs | undefined;

  afterAll(async () => {
    await jobs?.close(2_000);
    const queue = new Queue(QUEUE, { connection, prefix });
    await queue.obliterate({ force: true });
    await queue.close();
    await connection.quit();
  });

  it('when runs succeed, fail and are skipped, then each is counted by job and outcome, and the queue depth is read', async () => {
    let slowRuns = 0;
    let release!: () => void;
    const slowDone = new Promise<void>((resolve) => (release = resolve));
    jobs = await startScheduledJobs({
      connection,
      prefix,
      queueName: QUEUE,
      logger,
      metrics: registry,
      jobs: [
        { name: 'works', schedule: { every: 200 }, handler: async () => ({ done: 1 }) },
        {
          name: 'breaks',
          schedule: { every: 60_000 },
          attempts: 1,
          handler: async () => {
            throw new Error('this run fails');
          },
        },
        // Its first run goes on past the next ticks, which are skipped.
        {
          name: 'lingers',
          schedule: { every: 200 },
          handler: async () => {
            if (++slowRuns === 1) await slowDone;
            return { done: 1 };
          },
        },
      ],
    });

    const runs = (job: string, outcome: string) =>
      registry
        .metrics()
        .then((text) => metricValue(text, 'scheduled_job_runs_total', { queue: QUEUE, job, outcome }) ?? 0);
    await waitUntil(async () => (await runs('works', 'succeeded')) >= 2 && (await runs('breaks', 'failed')) >= 1, {
      timeoutMs: 10_000,
      intervalMs: 100,
      what: 'runs of works and breaks to be counted',
    });
    await waitUntil(async () => (await runs('lingers', 'skipped')) >= 1, {
      timeoutMs: 10_000,
      intervalMs: 100,
      what: 'a tick of lingers to be skipped',
    });
    release();

    const text = await registry.metrics();
    expect(
      metricValue(text, 'scheduled_job_runs_total', { queue: QUEUE, job: 'breaks', outcome: 'succeeded' }),
    ).toBeUndefined();
    expect(
      metricValue(text, 'scheduled_job_duration_seconds_count', { queue: QUEUE, job: 'breaks' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      metricValue(text, 'scheduled_job_last_success_timestamp_seconds', { queue: QUEUE, job: 'breaks' }),
    ).toBeUndefined();
    expect(
      metricValue(text, 'scheduled_job_last_success_timestamp_seconds', { queue: QUEUE, job: 'works' }),
    ).toBeGreaterThan(Date.now() / 1000 - 10);
    // The next tick of each of the three schedulers waits as a delayed job; the failed run is kept.
    expect(metricValue(text, 'scheduled_job_queue_jobs', { queue: QUEUE, state: 'delayed' })).toBeGreaterThanOrEqual(2);
    expect(metricValue(text, 'scheduled_job_queue_jobs', { queue: QUEUE, state: 'failed' })).toBeGreaterThanOrEqual(1);
  });
});
