import type { Logger } from '@booking/logging';
import { inSpan } from '@booking/tracing';
import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { jobRunMetrics } from './job-metrics';
import { reconcileSchedulers, registerSchedulers } from './reconcile-schedulers';
import type { JobSummary, ScheduledJob } from './scheduled-job';
import { selfHealingWorker, type CountRun } from './wedged-worker';

export interface ScheduledJobsOptions {
  /**
   * A connection BullMQ workers can use (`maxRetriesPerRequest: null`, such as `queueConnection`
   * of @booking/webhook-queue), so waits for Redis block instead of failing. Owned by the caller:
   * `close()` leaves it open.
   */
  connection: Redis | Cluster;
  /** Redis key prefix of the queue (`QUEUE_PREFIX`), so deployments and test runs stay apart. */
  prefix: string;
  /** The queue of `jobs`, one per kind of process; every process of that kind passes the same jobs. */
  queueName: string;
  jobs: readonly ScheduledJob[];
  logger: Logger;
  /**
   * How long a run holds its job without renewing the lock (a live worker renews it every half of
   * this). A run whose process died is taken up again by another process within about one and a
   * half times this. Default 60 000 ms.
   */
  lockDurationMs?: number;
  /**
   * The process's Prometheus registry: runs by job and outcome, their duration, each job's last
   * success and the queue's depth are registered there (docs/metrics.md). Default: none.
   */
  metrics?: Registry;
}

export interface ScheduledJobs {
  /**
   * Stops taking jobs, aborts the running handlers' `signal` and waits up to `timeoutMs` (default
   * 10 000) for them to return. A run still going then is left to its lock: once that expires,
   * another process runs the tick again.
   */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * Registers `jobs` as BullMQ job schedulers and runs a worker for them. Any number of processes
 * may do this with the same jobs: the schedulers are upserted, so there is one job per tick across
 * all of them, and each job is taken by one process. Schedulers are registered again whenever the
 * connection to Redis is made again, in case Redis came back without its data.
 */
export async function startScheduledJobs(options: ScheduledJobsOptions): Promise<ScheduledJobs> {
  const { connection, prefix, queueName, jobs, logger } = options;
  const byName = new Map(jobs.map((job) => [job.name, job]));
  if (byName.size !== jobs.length) throw new Error(`two scheduled jobs of ${queueName} have the same name`);

  const queue = new Queue(queueName, { connection, prefix });
  queue.on('error', (error: Error) => logger.warn({ err: error, queue: queueName }, 'scheduled jobs queue error'));
  await reconcileSchedulers(queue, jobs);

  let closing = false;
  // One round at a time: while Redis is away a round waits on the connection, and rounds must
  // not pile up behind it.
  let registering = false;
  const reRegister = (why: string) => {
    if (closing || registering) return;
    registering = true;
    registerSchedulers(queue, jobs)
      .catch((error: unknown) =>
        logger.error({ err: error, queue: queueName, why }, 'job schedulers not registered again'),
      )
      .finally(() => (registering = false));
  };
  const onReady = () => reRegister('reconnected');
  connection.on('ready', onReady);
  // Also on a timer: a Redis Cluster failover loses the writes its replica had not received (the
  // next tick's delayed job among them) without the client ever reconnecting, and a schedule
  // whose next job is gone never ticks again.
  const reRegistering = setInterval(() => reRegister('timer'), reconcileEveryMs(jobs)).unref();
  const metrics = jobRunMetrics(options.metrics, queue, queueName);

  const stopping = new AbortController();
  const run = async (job: Job): Promise<JobSummary> => {
    const definition = byName.get(job.name);
    // A tick of a job another version of this process defines (during a rolling deploy).
    if (!definition) throw new UnrecoverableError(`no scheduled job named ${job.name} in this process`);
    const log = logger.child({ job: job.name });
    if ((await otherRuns(queue, job)) >= (definition.concurrency ?? 1)) {
      log.info({ jobId: job.id }, 'scheduled job skipped: its previous run is still going');
      metrics.skipped(job.name);
      return { skipped: true };
    }
    const started = Date.now();
    let summary: JobSummary;
    try {
      summary = await definition.handler({
        logger: log,
        signal: stopping.signal,
        tickId: job.id!,
        attempt: job.attemptsMade + 1,
      });
    } catch (error) {
      metrics.finished(job.name, false, (Date.now() - started) / 1000);
      throw error;
    }
    metrics.finished(job.name, true, (Date.now() - started) / 1000);
    log.info({ jobId: job.id, ...summary, durationMs: Date.now() - started }, 'scheduled job done');
    return summary;
  };

  const lockDuration = options.lockDurationMs ?? 60_000;
  // Room for every job to run at once in one process; `concurrency` of each is enforced in `run`.
  const concurrency = Math.max(
    1,
    jobs.reduce((sum, job) => sum + (job.concurrency ?? 1), 0),
  );
  // Each run is a span (docs/tracing.md): the events it records carry its trace to their deliveries.
  const traced = (job: Job) =>
    inSpan(
      `job ${job.name}`,
      { kind: 'consumer', attributes: { 'job.name': job.name, 'job.queue': queueName, 'job.id': job.id ?? '' } },
      () => run(job),
    );
  const startWorker = (countRun: CountRun) => {
    const worker = new Worker(queueName, (job: Job, token?: string) => countRun(job, token, () => traced(job)), {
      connection,
      prefix,
      concurrency,
      lockDuration,
      stalledInterval: Math.ceil(lockDuration / 2),
    });
    worker.on('failed', (job, error) => {
      const willRetry =
        job !== undefined && !(error instanceof UnrecoverableError) && job.attemptsMade < (job.opts.attempts ?? 1);
      const fields = { err: error, job: job?.name, attempt: job?.attemptsMade };
      if (willRetry) logger.warn(fields, 'scheduled job failed; will retry');
      else logger.error(fields, 'scheduled job failed');
    });
    worker.on('error', (error) => logger.error({ err: error, queue: queueName }, 'scheduled jobs worker error'));
    return worker;
  };
  const workers = selfHealingWorker({
    queue,
    start: startWorker,
    concurrency,
    logger,
    what: 'scheduled jobs worker',
  });
  logger.info({ queue: queueName, jobs: jobs.map((job) => job.name) }, 'scheduled jobs started');

  return {
    async close(timeoutMs = 10_000) {
      closing = true;
      connection.off('ready', onReady);
      clearInterval(reRegistering);
      stopping.abort();
      metrics.close();
      // Every worker (and any replaced as wedged) stops taking jobs; their runs get `timeoutMs`.
      if (!(await workers.close(timeoutMs)))
        logger.warn({ queue: queueName, timeoutMs }, 'scheduled job still running at shutdown; left to its lock');
      await queue.close();
    },
  };
}

/**
 * Runs of `job`'s name in progress elsewhere. A run is active before it asks, so of two runs that
 * start together at least one sees the other: they never both go ahead past `concurrency`.
 */
async function otherRuns(queue: Queue, job: Job): Promise<number> {
  const active = await queue.getActive();
  return active.filter((other) => other.name === job.name && other.id !== job.id).length;
}

/**
 * How often the schedulers are registered again: twice the shortest period of `jobs`, so a lost
 * schedule misses about two ticks at most; at least a second, at most a minute.
 */
function reconcileEveryMs(jobs: readonly ScheduledJob[]): number {
  const periods = jobs.map((job) => ('every' in job.schedule ? job.schedule.every : 60_000));
  return Math.min(60_000, Math.max(1_000, 2 * Math.min(...periods)));
}
