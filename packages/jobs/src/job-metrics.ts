import { readWithin } from '@booking/metrics';
import type { Queue } from 'bullmq';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** What `startScheduledJobs` tells its registry about runs. */
export interface JobRunMetrics {
  skipped(job: string): void;
  finished(job: string, succeeded: boolean, seconds: number): void;
  /** Stops reading the queue's depth (its queue is closing). */
  close(): void;
}

const NO_METRICS: JobRunMetrics = { skipped() {}, finished() {}, close() {} };

/** How long a scrape waits for the queue's counts: a worker's connection waits forever while Redis is away. */
const DEPTH_READ_TIMEOUT_MS = 1_000;

/** The queues whose depth each registry reads on a scrape: a process may run several. */
const queuesOf = new WeakMap<Registry, Map<string, Queue>>();

/**
 * Runs by job and outcome, their duration and the last success of each job, and the depth of the
 * queue read on each scrape, all labelled by queue. Several queues may share one registry (their
 * metrics are made once per registry).
 */
export function jobRunMetrics(registry: Registry | undefined, queue: Queue, queueName: string): JobRunMetrics {
  if (!registry) return NO_METRICS;
  const { runs, duration, lastSuccess } = runMetricsOf(registry);
  const queues = queuesOf.get(registry) ?? new Map<string, Queue>();
  queuesOf.set(registry, queues);
  queues.set(queueName, queue);
  return {
    skipped: (job) => runs.inc({ queue: queueName, job, outcome: 'skipped' }),
    finished(job, succeeded, seconds) {
      runs.inc({ queue: queueName, job, outcome: succeeded ? 'succeeded' : 'failed' });
      duration.observe({ queue: queueName, job }, seconds);
      if (succeeded) lastSuccess.set({ queue: queueName, job }, Date.now() / 1000);
    },
    close: () => queues.delete(queueName),
  };
}

function runMetricsOf(registry: Registry) {
  const existing = registry.getSingleMetric('scheduled_job_runs_total');
  if (existing) {
    return {
      runs: existing as Counter<'queue' | 'job' | 'outcome'>,
      duration: registry.getSingleMetric('scheduled_job_duration_seconds') as Histogram<'queue' | 'job'>,
      lastSuccess: registry.getSingleMetric('scheduled_job_last_success_timestamp_seconds') as Gauge<'queue' | 'job'>,
    };
  }
  new Gauge({
    name: 'scheduled_job_queue_jobs',
    help: 'Jobs in a scheduled-jobs queue by state, read from Redis on each scrape (the whole queue, the same for every process)',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const [queueName, queue] of queuesOf.get(registry) ?? []) {
        const counts = await readWithin(
          queue.getJobCounts('waiting', 'active', 'delayed', 'failed'),
          DEPTH_READ_TIMEOUT_MS,
        );
        // No answer in time (Redis away): the series are absent rather than stale.
        if (!counts) continue;
        for (const [state, count] of Object.entries(counts)) this.set({ queue: queueName, state }, count);
      }
    },
  });
  return {
    runs: new Counter({
      name: 'scheduled_job_runs_total',
      help: 'Runs of scheduled jobs by outcome: succeeded, failed (retried while attempts remain), skipped (its previous run was still going)',
      labelNames: ['queue', 'job', 'outcome'] as const,
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'scheduled_job_duration_seconds',
      help: 'Duration of scheduled job runs that went ahead (succeeded or failed)',
      labelNames: ['queue', 'job'] as const,
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
      registers: [registry],
    }),
    lastSuccess: new Gauge({
      name: 'scheduled_job_last_success_timestamp_seconds',
      help: 'When a run of the job last succeeded in this process (Unix time); absent before the first',
      labelNames: ['queue', 'job'] as const,
      registers: [registry],
    }),
  };
}
