import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createApiMetrics } from '@booking/api/src/metrics/api-metrics';
import { createWorkerMetrics } from '@booking/api/src/jobs/worker-metrics';
import { createPgPool, createRedis } from '@booking/db';
import { EndpointPlaces } from '@booking/dispatcher/src/delivery/endpoint-places';
import { createMetrics } from '@booking/dispatcher/src/metrics';
import { startScheduledJobs } from '@booking/jobs';
import { createLogger } from '@booking/logging';
import { createDeliveryQueue, queueConnection } from '@booking/webhook-queue';

type Registry = ReturnType<typeof createApiMetrics>;

// The Grafana dashboard reads only metrics the services export, read from their registries as
// each process builds them, so renaming a metric without the dashboard fails here.

const DASHBOARD = path.resolve(__dirname, '../deploy/grafana/booking-service.json');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/booking_test';

interface Panel {
  title: string;
  type: string;
  targets?: { expr: string }[];
}

/** PromQL words that are not metric names: operators, modifiers and aggregation keywords. */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
]);

/** The metric names of a PromQL expression: identifiers left once strings, matchers, ranges, groupings and calls are taken out. */
function metricNamesOf(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  return [...bare.matchAll(/([a-zA-Z_:][\w:]*)(\s*\()?/g)]
    .filter((match) => match[2] === undefined)
    .map((match) => match[1]!)
    .filter((word) => !KEYWORDS.has(word));
}

/** Every series name a registry exports: a histogram's as _bucket, _sum and _count. */
function exportedNames(registries: Registry[]): Set<string> {
  const names = new Set<string>();
  for (const metric of registries.flatMap((registry) => registry.getMetricsAsArray())) {
    const { name, type } = metric as unknown as { name: string; type: string };
    if (type === 'histogram' || type === 'summary') {
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    } else names.add(name);
  }
  return names;
}

describe('the Grafana dashboard', () => {
  const prefix = `test-dashboard-${randomUUID()}`;
  const redis = createRedis(REDIS_URL);
  const pool = createPgPool(DATABASE_URL);
  const connection = queueConnection(REDIS_URL);
  const deliveryQueue = createDeliveryQueue(connection, prefix);
  let registries: Registry[];
  let closeJobs: () => Promise<void>;

  beforeAll(async () => {
    const api = createApiMetrics({ pool, redis, queueRedis: redis });
    const worker = createWorkerMetrics({ redis, queueRedis: connection });
    const dispatcher = createMetrics(deliveryQueue, new EndpointPlaces(10));
    // The job metrics are the ones startScheduledJobs registers (worker and dispatcher alike).
    const jobs = await startScheduledJobs({
      connection,
      prefix,
      queueName: 'dashboard-check',
      jobs: [],
      logger: createLogger('silent', 'dashboard-test'),
      metrics: worker,
    });
    closeJobs = () => jobs.close(1_000);
    registries = [api, worker, dispatcher.registry];
  });
  afterAll(async () => {
    await closeJobs?.();
    await deliveryQueue.close();
    // Bounded: at most 100 SCAN rounds over this test's own prefix.
    let cursor = '0';
    for (let round = 0; round < 100; round++) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
    await Promise.allSettled([connection.quit(), redis.quit(), pool.end()]);
  });

  it('when its queries are read, then every metric they name is one a service exports', () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] };
    const exported = exportedNames(registries);
    const queried = dashboard.panels.flatMap((panel) =>
      (panel.targets ?? []).flatMap((target) =>
        metricNamesOf(target.expr).map((name) => ({ panel: panel.title, name })),
      ),
    );

    expect(queried.length).toBeGreaterThan(20);
    expect(queried.filter(({ name }) => !exported.has(name))).toEqual([]);
    // Every panel but the row headers queries something.
    expect(dashboard.panels.filter((panel) => panel.type !== 'row' && !panel.targets?.length)).toEqual([]);
  });

  it('when the API, worker and dispatcher metrics are listed, then the dashboard shows each of them', () => {
    const dashboard = readFileSync(DASHBOARD, 'utf8');
    const ours = [...exportedNames(registries)].filter(
      (name) => !/^(process|nodejs)_/.test(name) && !name.endsWith('_sum') && !name.endsWith('_bucket'),
    );
    const histogramBase = (name: string) => name.replace(/_count$/, '');
    expect(ours.filter((name) => !dashboard.includes(histogramBase(name)))).toEqual([]);
  });
});
