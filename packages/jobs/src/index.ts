/**
 * @booking/jobs: periodic background work (expiries, sweeps, reconciliations) as BullMQ job
 * schedulers, one pattern for every process that runs such work.
 *
 * - A job is a `ScheduledJob`: a name, a schedule (`every` ms or a cron `pattern`) and a handler
 *   that returns a small summary, which is logged and kept as the job's result.
 * - A process runs its jobs with `startScheduledJobs`. Start as many processes as you like: each
 *   registers the same schedulers (an idempotent upsert), a tick is one job in Redis, and one
 *   process takes it. By default one run of a job goes at a time across all of them.
 * - Handlers must be idempotent. A tick can run twice (its process died or froze mid-run and the
 *   job went to another; a retry after a failure), and a run can be cut short by a shutdown.
 *   Claim rows with `FOR UPDATE SKIP LOCKED`, commit in batches, and check state in the same
 *   transaction that changes it, so a second run finds nothing left to do.
 * - Retries belong to the queue (`attempts`, `backoffMs`): a handler throws and the tick runs
 *   again later; the next tick comes on schedule either way.
 * - Work due at a known moment is also asked for then with `jobRunsAt(...).runAt(name, at, key)`:
 *   a delayed job of the same name runs the same handler at that moment; the tick is the safety
 *   net when Redis loses it.
 * - A worker wedged by a Redis Cluster failover (it takes no job while it has free slots) is
 *   replaced: `selfHealingWorker`, which the dispatcher's delivery worker uses too.
 */
export { startScheduledJobs } from './start-scheduled-jobs';
export type { ScheduledJobs, ScheduledJobsOptions } from './start-scheduled-jobs';
export type { JobContext, JobSchedule, JobSummary, ScheduledJob } from './scheduled-job';
export { jobRunsAt } from './job-runs-at';
export type { JobRunsAt } from './job-runs-at';
export { selfHealingWorker, WEDGED_AFTER_MS } from './wedged-worker';
export type { CountRun, SelfHealingWorker } from './wedged-worker';
