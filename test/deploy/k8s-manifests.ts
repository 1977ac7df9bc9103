import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { parseAllDocuments } from 'yaml';
import type { Config } from '@booking/config';

/** What the manifest tests read: the Kubernetes manifests in deploy/k8s, as plain objects. */

const ROOT = path.resolve(__dirname, '../..');
export const MANIFESTS_DIR = path.join(ROOT, 'deploy/k8s');

/** The Secret every secret setting comes from (docs/deployment.md creates it). */
export const SECRET_NAME = 'booking-secrets';
export const CONFIG_MAP_NAME = 'booking-config';

// Loose shapes: the schema test checks the objects against Kubernetes's own schemas first.
/* eslint-disable @typescript-eslint/no-explicit-any */
export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
} & Record<string, any>;
export type Container = Record<string, any> & { name: string; command?: string[]; env?: EnvVar[] };
export type EnvVar = { name: string; value?: string; valueFrom?: Record<string, any> };
/* eslint-enable @typescript-eslint/no-explicit-any */

export interface ManifestFile {
  /** Relative to deploy/k8s, e.g. `api.yaml` or `optional/dispatcher-keda.yaml`. */
  file: string;
  objects: K8sObject[];
}

/** Every `*.yaml` under deploy/k8s, each document parsed strictly (a duplicate key is an error). */
export function readManifests(): ManifestFile[] {
  const files = readdirSync(MANIFESTS_DIR, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.yaml'))
    .sort();
  return files.map((file) => {
    const documents = parseAllDocuments(readFileSync(path.join(MANIFESTS_DIR, file), 'utf8'), { uniqueKeys: true });
    if (!Array.isArray(documents)) throw new Error(`${file}: not a YAML stream`);
    const objects = documents.map((document, index) => {
      if (document.errors.length > 0) throw new Error(`${file} #${index}: ${document.errors.join('; ')}`);
      return document.toJS() as K8sObject;
    });
    return { file, objects };
  });
}

export const allObjects = (files: ManifestFile[]) => files.flatMap((file) => file.objects);

export const ofKind = (objects: K8sObject[], kind: string) => objects.filter((object) => object.kind === kind);

/** The pod template of a Deployment or a Job. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const podSpecOf = (workload: K8sObject): Record<string, any> => workload.spec.template.spec;

export const containersOf = (workload: K8sObject): Container[] => podSpecOf(workload).containers;

/** Each kind of process the image runs, told apart by the file its container starts. */
export interface ProcessKind {
  /** The package.json script that runs the same file (`tsx <entry>`). */
  script: string;
  /** Container port name -> the setting that chooses that port and its value in a loaded config. */
  ports: Record<string, { setting: string; of: (config: Config) => number }>;
  /** The longest a graceful shutdown may take after SIGTERM, by the process's own settings. */
  shutdownMs: (config: Config) => number;
}

export const PROCESS_KINDS: Record<string, ProcessKind> = {
  'apps/api/src/main.ts': {
    script: 'start:api',
    ports: {
      http: { setting: 'PORT', of: (config) => config.port },
      metrics: { setting: 'API_METRICS_PORT', of: (config) => config.apiMetricsPort },
    },
    shutdownMs: (config) => config.shutdownDrainMs + config.shutdownGraceMs,
  },
  'apps/dispatcher/src/main.ts': {
    script: 'start:dispatcher',
    ports: { metrics: { setting: 'METRICS_PORT', of: (config) => config.metricsPort } },
    shutdownMs: (config) => config.shutdownGraceMs + config.webhooks.timeoutMs,
  },
  'apps/api/src/jobs/worker-main.ts': {
    script: 'start:worker',
    ports: { metrics: { setting: 'WORKER_HEALTH_PORT', of: (config) => config.workerHealthPort } },
    shutdownMs: (config) => config.shutdownGraceMs,
  },
  'packages/db/src/migrations/cli.ts': { script: 'migrate', ports: {}, shutdownMs: () => 0 },
};

/** The TypeScript file a container runs: its command is `node --import tsx <file>`. */
export function entryOf(container: Container): string {
  const command = container.command ?? [];
  if (command.length !== 4 || command[0] !== 'node' || command[1] !== '--import' || command[2] !== 'tsx') {
    throw new Error(`${container.name}: command ${JSON.stringify(command)} is not node --import tsx <file>`);
  }
  return command[3]!;
}

/**
 * Settings whose value is a secret, or carries one: keys, passwords and URLs with credentials.
 * STRIPE_PUBLISHABLE_KEY is public by design but lives beside its secret key (both or neither).
 */
export const isSecretSetting = (name: string) =>
  /SECRET|PASSWORD|_KEY$/.test(name) || ['DATABASE_URL', 'REDIS_URL', 'OTEL_EXPORTER_OTLP_HEADERS'].includes(name);

/**
 * The settings the service reads: the keys of `specs` in the config loader, and the OTEL_*
 * variables the tracing package names (OpenTelemetry's own, not in the loader).
 */
export function knownSettings(): Set<string> {
  const loaderFile = path.join(ROOT, 'packages/config/src/load-config.ts');
  const source = ts.createSourceFile(loaderFile, readFileSync(loaderFile, 'utf8'), ts.ScriptTarget.ES2022);
  const names = new Set<string>();
  source.forEachChild(function visit(node) {
    if (ts.isVariableDeclaration(node) && node.name.getText(source) === 'specs' && node.initializer) {
      if (!ts.isObjectLiteralExpression(node.initializer)) throw new Error('specs is not an object literal');
      for (const property of node.initializer.properties) names.add(property.name!.getText(source));
    }
    node.forEachChild(visit);
  });
  if (names.size === 0) throw new Error(`no settings found in ${loaderFile}`);
  const tracingDir = path.join(ROOT, 'packages/tracing/src');
  const tracingFiles = existsSync(tracingDir) ? readdirSync(tracingDir) : [];
  for (const file of tracingFiles.filter((name) => name.endsWith('.ts'))) {
    for (const match of readFileSync(path.join(tracingDir, file), 'utf8').matchAll(/'(OTEL_[A-Z_]+)'/g)) {
      names.add(match[1]!);
    }
  }
  return names;
}

/**
 * The environment a container gets, as the kubelet builds it: the ConfigMaps of `envFrom`, then
 * `env` on top. A value from the Secret is `secretValue(name)`, standing in for what the
 * operator puts there.
 */
export function containerEnv(
  container: Container,
  configMaps: K8sObject[],
  secretValue: (name: string) => string,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    const map = configMaps.find((candidate) => candidate.metadata.name === source.configMapRef?.name);
    if (!map) throw new Error(`${container.name}: envFrom names no ConfigMap of the manifests`);
    Object.assign(env, map.data);
  }
  for (const variable of container.env ?? []) {
    const secretRef = variable.valueFrom?.secretKeyRef;
    if (secretRef) env[variable.name] = secretValue(secretRef.key);
    else if (variable.value !== undefined) env[variable.name] = variable.value;
    else throw new Error(`${container.name}: ${variable.name} comes from neither a value nor the Secret`);
  }
  return env;
}
