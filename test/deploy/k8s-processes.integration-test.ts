import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Client } from 'pg';
import { createRedis, type Redis } from '@booking/db';
import {
  createIsolatedDatabase,
  freePort,
  imageNodeOptions,
  killAllServiceProcesses,
  startServiceProcess,
  waitUntil,
  type ServiceProcess,
} from '@booking/test-kit';
import {
  allObjects,
  containerEnv,
  containersOf,
  entryOf,
  ofKind,
  podSpecOf,
  PROCESS_KINDS,
  readManifests,
  type Container,
  type K8sObject,
} from './k8s-manifests';

// What the kubelet would do with deploy/k8s, minus the cluster: each Deployment's process runs
// as an OS process with the environment its image and manifest build (the Dockerfile's
// NODE_OPTIONS, the ConfigMap, then env, with this machine's PostgreSQL and Redis in the Secret's
// place and free ports in place of the container ports), its probes are asked on their ports and
// paths, and SIGTERM must end it cleanly within the pod's grace period. The migration Job's
// command creates and migrates a database.

const ROOT = path.resolve(__dirname, '../..');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const objects = allObjects(readManifests());
const configMaps = ofKind(objects, 'ConfigMap');

interface Pod {
  deployment: K8sObject;
  container: Container;
  /** Container port name -> the port this test gave the process. */
  ports: Record<string, number>;
  env: Record<string, string>;
  service?: ServiceProcess;
}

type Probe = { httpGet: { path: string; port: string } };
const probeUrl = (pod: Pod, probe: Probe) => `http://127.0.0.1:${pod.ports[probe.httpGet.port]}${probe.httpGet.path}`;
const status = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(3_000) })).status;

describe('the manifests run the service', () => {
  let isolated: Awaited<ReturnType<typeof createIsolatedDatabase>>;
  let pods: Pod[];
  const secrets = (database: string) => (key: string) =>
    ({ DATABASE_URL: database, REDIS_URL })[key] ?? randomBytes(24).toString('hex');

  beforeAll(async () => {
    isolated = await createIsolatedDatabase();
    pods = [];
    for (const deployment of ofKind(objects, 'Deployment')) {
      const container = containersOf(deployment)[0]!;
      const kind = PROCESS_KINDS[entryOf(container)]!;
      // The image's environment (its NODE_OPTIONS), then what the manifest sets.
      const env: Record<string, string> = {
        NODE_OPTIONS: imageNodeOptions(ROOT),
        ...containerEnv(container, configMaps, secrets(isolated.env.DATABASE_URL!)),
      };
      // This run's queues, apart from other tests' and from a local `pnpm start`; quieter logs.
      env.QUEUE_PREFIX = isolated.env.QUEUE_PREFIX!;
      delete env.LOG_LEVEL;
      const ports: Record<string, number> = {};
      for (const [name, port] of Object.entries(kind.ports)) {
        ports[name] = await freePort();
        env[port.setting] = String(ports[name]);
      }
      pods.push({ deployment, container, ports, env });
    }
    await Promise.all(
      pods.map(async (pod) => {
        pod.service = await startServiceProcess({
          name: pod.deployment.metadata.name,
          entry: entryOf(pod.container),
          env: pod.env,
          readyUrl: probeUrl(pod, pod.container.startupProbe),
          readyWithinMs: 60_000,
        });
      }),
    );
  }, 90_000);

  afterAll(async () => {
    await killAllServiceProcesses();
    const redis = createRedis(REDIS_URL) as Redis;
    for (let cursor = '0', first = true; first || cursor !== '0'; first = false) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${isolated.env.QUEUE_PREFIX}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    }
    await redis.quit();
    await isolated.drop();
  });

  it('every probe of every Deployment answers 200 on its port and path', async () => {
    const answers = [];
    for (const pod of pods) {
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
        const url = probeUrl(pod, pod.container[probe]);
        // Readiness is asked again until it answers, as the kubelet does every periodSeconds: the
        // API's first check is its first PostgreSQL query, which a loaded CI machine once took
        // past the check's 2 s. The startup and liveness routes need no backend: asked once.
        const answer =
          probe === 'readinessProbe'
            ? await waitUntil(async () => ((await status(url)) === 200 ? 200 : false), {
                timeoutMs: 30_000,
                intervalMs: 1_000,
                what: `${pod.deployment.metadata.name} to be ready`,
              }).catch(() => status(url))
            : await status(url);
        answers.push(`${pod.deployment.metadata.name} ${probe}: ${answer}`);
      }
    }
    expect(answers).toEqual(
      pods.flatMap((pod) =>
        ['startupProbe', 'livenessProbe', 'readinessProbe'].map(
          (probe) => `${pod.deployment.metadata.name} ${probe}: 200`,
        ),
      ),
    );
  });

  it('the Prometheus annotation points at a /metrics that answers', async () => {
    for (const pod of pods) {
      const annotations = pod.deployment.spec.template.metadata.annotations;
      const response = await fetch(`http://127.0.0.1:${pod.ports.metrics}${annotations['prometheus.io/path']}`);
      expect(`${pod.deployment.metadata.name} ${response.status}`).toBe(`${pod.deployment.metadata.name} 200`);
      expect(await response.text()).toMatch(/^# HELP /m);
    }
  });

  it('SIGTERM: the API fails readiness but stays live while it drains, and every process exits 0 within its grace period', async () => {
    const api = pods.find((pod) => pod.deployment.metadata.name === 'booking-api')!;
    const stopped = pods.map(async (pod) => {
      const graceMs = podSpecOf(pod.deployment).terminationGracePeriodSeconds * 1000;
      const started = Date.now();
      pod.service!.child.kill('SIGTERM');
      const outcome = await Promise.race([
        pod.service!.exited,
        new Promise<string>((resolve) => setTimeout(() => resolve('still running'), graceMs).unref()),
      ]);
      return { name: pod.deployment.metadata.name, outcome, inTime: Date.now() - started < graceMs };
    });
    // Draining: the kubelet's readiness probe sees 503 and takes the pod out of the Service,
    // while liveness still passes, so the kubelet does not kill it early.
    await waitUntil(async () => (await status(probeUrl(api, api.container.readinessProbe))) === 503, {
      timeoutMs: 3_000,
      what: 'the API to fail /readyz after SIGTERM',
    });
    expect(await status(probeUrl(api, api.container.livenessProbe))).toBe(200);
    expect(await Promise.all(stopped)).toEqual(
      pods.map((pod) => ({ name: pod.deployment.metadata.name, outcome: 'exit 0', inTime: true })),
    );
  }, 60_000);

  it("the migration Job's command creates a missing database and migrates it, and a second run changes nothing", async () => {
    const job = ofKind(objects, 'Job')[0]!;
    const container = containersOf(job)[0]!;
    const url = new URL(isolated.env.DATABASE_URL!);
    url.pathname = `/${url.pathname.slice(1)}_migrate`;
    const env = containerEnv(container, configMaps, secrets(url.toString()));
    const run = () =>
      new Promise<{ code: number | null; output: string }>((resolve) => {
        const [command, ...args] = container.command!;
        const child = spawn(command!, args, {
          cwd: ROOT,
          env: { PATH: process.env.PATH, NODE_OPTIONS: imageNodeOptions(ROOT), ...env },
        });
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
        child.once('exit', (code) => {
          clearTimeout(timer);
          resolve({ code, output });
        });
      });
    try {
      const first = await run();
      expect(first).toMatchObject({ code: 0, output: expect.stringMatching(/applied \d+ migration\(s\)/) });
      const second = await run();
      expect(second).toMatchObject({ code: 0, output: expect.stringContaining('database is up to date') });
    } finally {
      const admin = new URL(url.toString());
      admin.pathname = '/postgres';
      const client = new Client({ connectionString: admin.toString() });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS "${url.pathname.slice(1)}" WITH (FORCE)`);
      await client.end();
    }
  }, 90_000);
});
