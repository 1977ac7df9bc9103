import path from 'node:path';
import { freePort, killAllServiceProcesses, startServiceProcess, type ServiceProcess } from '@booking/test-kit';

/** A dispatcher running as its own OS process, answering /healthz on its metrics port. */
export interface DispatcherProcess extends ServiceProcess {
  metricsPort: number;
}

/** Starts a dispatcher process with `env` and waits until its /healthz answers (relay listening, worker created). */
export async function startDispatcherProcess(
  name: string,
  env: Record<string, string>,
  readyWithinMs = 60_000,
): Promise<DispatcherProcess> {
  const metricsPort = await freePort();
  const service = await startServiceProcess({
    name: `dispatcher ${name}`,
    entry: path.join('apps', 'dispatcher', 'src', 'main.ts'),
    env: { ...env, METRICS_PORT: String(metricsPort) },
    readyUrl: `http://127.0.0.1:${metricsPort}/healthz`,
    readyWithinMs,
  });
  return Object.assign(service, { name, metricsPort });
}

export { killAllServiceProcesses as killAllDispatcherProcesses };
