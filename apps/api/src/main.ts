// First: instrumentation must be in place before the modules it traces load.
import { tracing } from './tracing';
import { ConfigError, loadConfig } from '@booking/config';
import { serveMetrics } from '@booking/metrics';
import { createApp } from './app';
import { closeAppDeps, createAppDeps } from './app-deps';
import { createApiMetrics } from './metrics/api-metrics';

function start() {
  const config = loadConfig();
  const deps = createAppDeps(config);
  const server = createApp(deps).listen(config.port, () => {
    deps.logger.info({ port: config.port }, 'api listening');
  });
  server.keepAliveTimeout = config.keepAliveTimeoutMs;
  // On a port of its own: the load balancer forwards PORT only.
  const metricsServer = serveMetrics(createApiMetrics(deps), {
    port: config.apiMetricsPort,
    logger: deps.logger,
    portSetting: 'API_METRICS_PORT',
  });

  // Behind a load balancer: first drain (see Drain): /readyz fails while requests are still
  // served, each answer closing its connection, until the balancer has taken this replica out
  // of rotation. Then stop taking connections, let in-flight requests finish, and close.
  // Ctrl-C in a terminal (SIGINT) has no balancer to wait for and skips the drain.
  let shuttingDown = false;
  const shutdown = (signal: string, drainMs: number) => {
    // A second signal (SIGINT after SIGTERM) must not cut the drain short or close twice.
    if (shuttingDown) return;
    shuttingDown = true;
    deps.logger.info({ signal, drainMs }, 'api shutting down');
    deps.drain.draining = true;
    const force = setTimeout(() => process.exit(1), drainMs + config.shutdownGraceMs).unref();
    setTimeout(() => {
      // Node closes the connections idle at close() only: one whose request was still running
      // then (answered keep-alive, as it came before the drain) would hold the server open until
      // the force exit. Such connections are closed as they go idle.
      const idle = setInterval(() => server.closeIdleConnections(), 100);
      server.close(() => {
        clearInterval(idle);
        metricsServer.close();
        // Spans of the last requests are exported last.
        void closeAppDeps(deps)
          .finally(() => tracing.shutdown())
          .finally(() => {
            clearTimeout(force);
            process.exit(0);
          });
      });
      server.closeIdleConnections();
    }, drainMs);
  };
  // `on`, not `once`: a repeated signal must find our listener, which ignores it, rather than
  // none (under the tsx CLI, a signal nobody listens for exits the process mid-drain).
  process.on('SIGTERM', () => shutdown('SIGTERM', config.shutdownDrainMs));
  process.on('SIGINT', () => shutdown('SIGINT', 0));
}

try {
  start();
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
}
