import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '@booking/config';
import {
  allObjects,
  CONFIG_MAP_NAME,
  containerEnv,
  containersOf,
  entryOf,
  isSecretSetting,
  knownSettings,
  ofKind,
  podSpecOf,
  PROCESS_KINDS,
  readManifests,
  SECRET_NAME,
  type Container,
  type K8sObject,
} from './k8s-manifests';
import { schemaProblems } from './k8s-schema';

// The Kubernetes manifests of deploy/k8s, checked without a cluster: each object against its
// kind's schema, then what a schema cannot see (docs/deployment.md says what they promise).

const files = readManifests();
const objects = allObjects(files);
const deployments = ofKind(objects, 'Deployment');
const jobs = ofKind(objects, 'Job');
const workloads = [...deployments, ...jobs];
const configMaps = ofKind(objects, 'ConfigMap');
const packageJson = JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};

/** Stand-ins for what the operator puts in the Secret, valid for the config loader. */
const secretValue = (key: string) =>
  ({
    DATABASE_URL: 'postgresql://booking:password@postgres:5432/booking',
    REDIS_URL: 'redis://:password@redis:6379',
    STRIPE_SECRET_KEY: 'sk_test_stand_in',
    STRIPE_PUBLISHABLE_KEY: 'pk_test_stand_in',
  })[key] ?? `stand-in-${key.toLowerCase()}-of-32-or-more-characters`;

const envOf = (container: Container) => containerEnv(container, configMaps, secretValue);
const kindOf = (container: Container) => {
  const kind = PROCESS_KINDS[entryOf(container)];
  if (!kind) throw new Error(`${container.name} runs ${entryOf(container)}, no process of the service`);
  return kind;
};
const selects = (selector: Record<string, string>, labels: Record<string, string> = {}) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value);
const podLabels = (deployment: K8sObject): Record<string, string> => deployment.spec.template.metadata.labels;
const deploymentNamed = (name: string) => deployments.find((deployment) => deployment.metadata.name === name);

describe('deploy/k8s manifests', () => {
  it('holds the objects the deployment guide applies', () => {
    const names = (kind: string) => ofKind(objects, kind).map((object) => object.metadata.name);
    expect(names('Deployment').sort()).toEqual(['booking-api', 'booking-dispatcher', 'booking-worker']);
    expect(names('Job')).toEqual(['booking-migrate']);
    expect(names('ConfigMap')).toEqual([CONFIG_MAP_NAME]);
    expect(names('PodDisruptionBudget').sort()).toEqual(['booking-api', 'booking-dispatcher', 'booking-worker']);
    expect(names('HorizontalPodAutoscaler')).toEqual(['booking-api']);
    expect(names('ScaledObject')).toEqual(['booking-dispatcher']);
    // No Secret object: its values are the operator's, never the repository's.
    expect(names('Secret')).toEqual([]);
  });

  it.each(
    files.flatMap(({ file, objects }) =>
      objects.map((object) => [`${file}: ${object.kind} ${object.metadata.name}`, object] as const),
    ),
  )('%s conforms to its Kubernetes schema, with no unknown field', (_name, object) => {
    expect(schemaProblems(object)).toEqual([]);
  });

  it('the schema check finds a wrong type and an unknown field', () => {
    const api = structuredClone(deploymentNamed('booking-api')!);
    api.spec.revisionHistoryLimit = 'five';
    const container = containersOf(api)[0]!;
    container.livenesProbe = container.livenessProbe;
    delete container.livenessProbe;
    const problems = schemaProblems(api).join('\n');
    expect(problems).toMatch(/revisionHistoryLimit must be integer/);
    expect(problems).toMatch(/containers\[0\]\.livenesProbe: not a field of Deployment/);
  });

  it('every workload runs one image, with the file its package.json script runs', () => {
    const images = new Set(workloads.flatMap((workload) => containersOf(workload).map((container) => container.image)));
    expect(images.size).toBe(1);
    for (const workload of workloads) {
      for (const container of containersOf(workload)) {
        const kind = kindOf(container);
        expect(`${workload.metadata.name}: ${packageJson.scripts[kind.script]}`).toBe(
          `${workload.metadata.name}: tsx ${entryOf(container)}`,
        );
      }
    }
    // The migration Job runs `pnpm migrate`'s file.
    expect(containersOf(jobs[0]!).map((container) => kindOf(container).script)).toEqual(['migrate']);
  });

  it('every variable a manifest sets is a setting the service reads', () => {
    const known = knownSettings();
    expect(known).toContain('REDIS_CLUSTER_NODES');
    const set = [
      ...configMaps.flatMap((map) => Object.keys(map.data ?? {})),
      ...workloads.flatMap((workload) =>
        containersOf(workload).flatMap((container) => (container.env ?? []).map((variable) => variable.name)),
      ),
    ];
    expect(set.filter((name) => !known.has(name))).toEqual([]);
  });

  it('every secret setting comes from the Secret, and nothing else does', () => {
    const known = [...knownSettings()];
    expect(known.filter(isSecretSetting).sort()).toEqual(
      expect.arrayContaining([
        'DATABASE_URL',
        'REDIS_URL',
        'TOKEN_SIGNING_SECRET',
        'WEBHOOK_SECRET_KEY',
        'STRIPE_SECRET_KEY',
      ]),
    );
    for (const map of configMaps) expect(Object.keys(map.data ?? {}).filter(isSecretSetting)).toEqual([]);
    for (const workload of workloads) {
      for (const container of containersOf(workload)) {
        for (const variable of container.env ?? []) {
          const ref = variable.valueFrom?.secretKeyRef;
          const where = `${workload.metadata.name}: ${variable.name}`;
          expect(`${where} from ${ref ? `${ref.name}/${ref.key}` : 'no Secret'}`).toBe(
            isSecretSetting(variable.name)
              ? `${where} from ${SECRET_NAME}/${variable.name}`
              : `${where} from no Secret`,
          );
        }
      }
    }
  });

  it("each container's environment is accepted by the config loader in production", () => {
    for (const workload of workloads) {
      for (const container of containersOf(workload)) {
        const env = envOf(container);
        expect(() => loadConfig(env)).not.toThrow();
      }
    }
    // The settings that must match across processes come from the one ConfigMap.
    for (const deployment of deployments) {
      expect(containersOf(deployment)[0]!.envFrom).toEqual([{ configMapRef: { name: CONFIG_MAP_NAME } }]);
      expect(envOf(containersOf(deployment)[0]!).NODE_ENV).toBe('production');
    }
  });

  it("ports and the Prometheus annotation are the ones the process's settings open", () => {
    for (const deployment of deployments) {
      const container = containersOf(deployment)[0]!;
      const config = loadConfig(envOf(container));
      const ports = Object.fromEntries(
        (container.ports as { name: string; containerPort: number }[]).map((port) => [port.name, port.containerPort]),
      );
      const expected = Object.fromEntries(
        Object.entries(kindOf(container).ports).map(([name, port]) => [name, port.of(config)]),
      );
      expect(`${deployment.metadata.name} ${JSON.stringify(ports)}`).toBe(
        `${deployment.metadata.name} ${JSON.stringify(expected)}`,
      );
      const annotations = deployment.spec.template.metadata.annotations ?? {};
      expect(annotations['prometheus.io/port']).toBe(String(ports.metrics));
      expect(annotations['prometheus.io/path']).toBe('/metrics');
    }
  });

  it('probes: startup and liveness on /healthz, readiness on /readyz for the API, on named ports of the container', () => {
    for (const deployment of deployments) {
      const container = containersOf(deployment)[0]!;
      const portNames = (container.ports as { name: string }[]).map((port) => port.name);
      const isApi = deployment.metadata.name === 'booking-api';
      const probes = ['startupProbe', 'livenessProbe', 'readinessProbe'].map((probe) => [
        probe,
        container[probe]?.httpGet?.path,
        portNames.includes(container[probe]?.httpGet?.port),
      ]);
      expect(probes).toEqual([
        ['startupProbe', '/healthz', true],
        ['livenessProbe', '/healthz', true],
        ['readinessProbe', isApi ? '/readyz' : '/healthz', true],
      ]);
      // The API's readiness checks PostgreSQL and Redis within 2 s each: the probe waits longer.
      if (isApi) expect(container.readinessProbe.timeoutSeconds).toBeGreaterThan(2);
    }
  });

  it('the grace period outlasts each process’s own shutdown', () => {
    for (const deployment of deployments) {
      const container = containersOf(deployment)[0]!;
      const config = loadConfig(envOf(container));
      const graceMs = podSpecOf(deployment).terminationGracePeriodSeconds * 1000;
      expect(graceMs).toBeGreaterThan(kindOf(container).shutdownMs(config));
    }
  });

  it('every container has requests and limits, runs as non-root on a read-only root, with a writable /tmp', () => {
    for (const workload of workloads) {
      const pod = podSpecOf(workload);
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: expect.any(Number) });
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      expect(pod.automountServiceAccountToken).toBe(false);
      for (const container of containersOf(workload)) {
        expect(Object.keys(container.resources.requests).sort()).toEqual(['cpu', 'memory']);
        expect(Object.keys(container.resources.limits).sort()).toEqual(['cpu', 'memory']);
        expect(container.securityContext).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        // tsx writes its compile cache to the temp directory.
        const tmp = container.volumeMounts.find((mount: { mountPath: string }) => mount.mountPath === '/tmp');
        expect(pod.volumes.find((volume: { name: string }) => volume.name === tmp?.name)?.emptyDir).toBeDefined();
      }
    }
  });

  it('selectors: each Deployment selects its own pods only; Service, PDBs and autoscalers reach a Deployment', () => {
    for (const deployment of deployments) {
      expect(selects(deployment.spec.selector.matchLabels, podLabels(deployment))).toBe(true);
      const others = deployments.filter((other) => other !== deployment);
      expect(others.filter((other) => selects(deployment.spec.selector.matchLabels, podLabels(other)))).toEqual([]);
    }
    const selected = (selector: Record<string, string>) =>
      deployments.filter((deployment) => selects(selector, podLabels(deployment))).map((d) => d.metadata.name);
    for (const service of ofKind(objects, 'Service')) {
      expect(selected(service.spec.selector)).toEqual(['booking-api']);
      const container = containersOf(deploymentNamed('booking-api')!)[0]!;
      const targets = service.spec.ports.map((port: { targetPort: string }) => port.targetPort);
      // Only the HTTP port: the metrics port stays off the path the load balancer serves.
      expect(targets).toEqual(['http']);
      expect(container.ports.map((port: { name: string }) => port.name)).toContain('http');
    }
    for (const budget of ofKind(objects, 'PodDisruptionBudget')) {
      expect(selected(budget.spec.selector.matchLabels)).toEqual([budget.metadata.name]);
    }
    for (const monitor of ofKind(objects, 'PodMonitor')) {
      expect(selected(monitor.spec.selector.matchLabels)).toEqual([monitor.metadata.name]);
    }
    for (const autoscaler of [...ofKind(objects, 'HorizontalPodAutoscaler'), ...ofKind(objects, 'ScaledObject')]) {
      const target = deploymentNamed(autoscaler.spec.scaleTargetRef.name);
      expect(target?.metadata.name).toBe(autoscaler.metadata.name);
    }
    // An autoscaled Deployment leaves its count to the autoscaler; each keeps two pods at least.
    expect(deploymentNamed('booking-api')!.spec.replicas).toBeUndefined();
    expect(ofKind(objects, 'HorizontalPodAutoscaler')[0]!.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(ofKind(objects, 'ScaledObject')[0]!.spec.minReplicaCount).toBeGreaterThanOrEqual(2);
  });

  it('the dispatchers scale on a metric the dispatcher exports', () => {
    const dir = path.resolve(__dirname, '../../apps/dispatcher/src');
    const metrics = readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => readFileSync(path.join(dir, file), 'utf8'))
      .join('\n');
    for (const scaled of ofKind(objects, 'ScaledObject')) {
      for (const trigger of scaled.spec.triggers) {
        const metric = /^max\((\w+)\{/.exec(trigger.metadata.query)?.[1];
        expect(metrics).toContain(`name: '${metric}'`);
      }
    }
  });

  it('the migration Job runs once, without retrying forever, with only the database secret', () => {
    const job = jobs[0]!;
    expect(podSpecOf(job).restartPolicy).toBe('Never');
    expect(job.spec.backoffLimit).toBeLessThanOrEqual(5);
    expect(job.spec.activeDeadlineSeconds).toBeGreaterThan(0);
    expect(containersOf(job)[0]!.env!.map((variable) => variable.name)).toEqual(['DATABASE_URL']);
  });
});
