import path from 'node:path';
import { Redis } from 'ioredis';
import {
  createIsolatedDatabase,
  freePort,
  killAllServiceProcesses,
  metricValue,
  scrapeMetrics,
  startServiceProcess,
  waitUntil,
} from '@booking/test-kit';
import { Queue } from 'bullmq';
import { LIFECYCLE_QUEUE } from '../src/jobs/lifecycle-jobs';

// The lifecycle worker as its own OS process, scraped on WORKER_HEALTH_PORT as Prometheus would.
// A database and queue prefix of its own: its jobs cover every tenant.
describe('the lifecycle worker metrics', () => {
  let isolated: Awaited<ReturnType<typeof createIsolatedDatabase>>;

  beforeAll(async () => {
    isolated = await createIsolatedDatabase();
  });
  afterAll(async () => {
    await killAllServiceProcesses();
    const connection = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
    const queue = new Queue(LIFECYCLE_QUEUE, { connection, prefix: isolated.env.QUEUE_PREFIX });
    await queue.obliterate({ force: true });
    await queue.close();
    await connection.quit();
    await isolated.drop();
  });

  it('when the worker runs its jobs, then /metrics shows runs by job and outcome, durations, last successes and the queue depth', async () => {
    const port = await freePort();
    const started = Date.now() / 1000;
    await startServiceProcess({
      name: 'lifecycle worker',
      entry: path.join('apps', 'api', 'src', 'jobs', 'worker-main.ts'),
      env: { ...isolated.env, UNPAID_BOOKING_SWEEP_SECONDS: '1', WORKER_HEALTH_PORT: String(port) },
      readyUrl: `http://127.0.0.1:${port}/healthz`,
    });
    const job = { queue: LIFECYCLE_QUEUE, job: 'expire-unpaid-bookings' };

    const text = await waitUntil(
      async () => {
        const scraped = await scrapeMetrics(port);
        return (metricValue(scraped, 'scheduled_job_runs_total', { ...job, outcome: 'succeeded' }) ?? 0) >= 2
          ? scraped
          : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 250, what: 'two runs of expire-unpaid-bookings in the worker metrics' },
    );
    expect(metricValue(text, 'scheduled_job_runs_total', { ...job, outcome: 'failed' }) ?? 0).toBe(0);
    expect(metricValue(text, 'scheduled_job_duration_seconds_count', job)).toBeGreaterThanOrEqual(2);
    const lastSuccess = metricValue(text, 'scheduled_job_last_success_timestamp_seconds', job)!;
    expect(lastSuccess).toBeGreaterThan(started);
    expect(lastSuccess).toBeLessThanOrEqual(Date.now() / 1000);
    // Each scheduler's next tick waits in the queue as a delayed job.
    expect(
      metricValue(text, 'scheduled_job_queue_jobs', { queue: LIFECYCLE_QUEUE, state: 'delayed' }),
    ).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'redis_connection_up', { connection: 'queue' })).toBe(1);
    expect(metricValue(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  }, 90_000);
});
