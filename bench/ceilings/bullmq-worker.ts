/**
 * The webhook ceilings: a bare BullMQ Worker (WEBHOOK_CONCURRENCY at a time) taking delivery
 * jobs queued with the dispatcher's own options, doing nothing, or one POST per job to the
 * bench's receiver (BENCH_POST_URL) over kept-alive connections: BullMQ + HTTP without
 * PostgreSQL. The bench queues its jobs in rounds of BENCH_ROUND_JOBS; the worker prints one JSON
 * line each time a round's worth more have completed.
 */
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { queueConnection, DELIVERY_QUEUE } from '@booking/webhook-queue';
import { REDIS_URL, ROOT } from '../lib/env';

interface MiniWorker {
  on(event: 'completed', listener: () => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  on(event: 'failed', listener: (job: unknown, error: Error) => void): void;
  waitUntilReady(): Promise<unknown>;
  close(): Promise<void>;
}
type WorkerClass = new (
  name: string,
  processor: (job: { id?: string }) => Promise<void>,
  options: { connection: unknown; prefix: string; concurrency: number },
) => MiniWorker;

const concurrency = Number(process.env.WEBHOOK_CONCURRENCY);
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });

function postOnce(url: string, id: string): Promise<void> {
  const body = JSON.stringify({ id });
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-service-delivery-id': id,
        },
        timeout: 10_000,
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

async function main() {
  const { Worker } = createRequire(path.join(ROOT, 'packages/webhook-queue/package.json'))('bullmq') as {
    Worker: WorkerClass;
  };
  const perRound = Number(process.env.BENCH_ROUND_JOBS);
  const target = process.env.BENCH_POST_URL;
  let completed = 0;
  const worker = new Worker(
    DELIVERY_QUEUE,
    async (job) => {
      if (target) await postOnce(target, job.id ?? '');
    },
    { connection: queueConnection(REDIS_URL), prefix: process.env.QUEUE_PREFIX ?? '', concurrency },
  );
  worker.on('error', (error) => console.error(`worker error: ${error.message}`));
  // A failed job (its POST refused or timed out) ends like a completed one, so its round still
  // ends; the round's line counts it, and stderr says why.
  let failed = 0;
  const settled = () => {
    if ((completed + failed) % perRound === 0)
      console.log(JSON.stringify({ done: completed, failed, last: Date.now() }));
  };
  worker.on('completed', () => {
    completed += 1;
    settled();
  });
  worker.on('failed', (_job, error) => {
    failed += 1;
    console.error(`job failed: ${error.message}`);
    settled();
  });
  await worker.waitUntilReady();
  console.log('ready');
  process.once('SIGTERM', () => void worker.close().finally(() => process.exit(0)));
}

void main();
