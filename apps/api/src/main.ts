import { ConfigError, loadConfig } from '@booking/config';
import { createApp } from './app';
import { closeAppDeps, createAppDeps } from './app-deps';

function start() {
  const config = loadConfig();
  const deps = createAppDeps(config);
  const server = createApp(deps).listen(config.port, () => {
    deps.logger.info({ port: config.port }, 'api listening');
  });

  // Behind a load balancer: stop taking connections, let in-flight requests finish, then close.
  const shutdown = (signal: string) => {
    deps.logger.info({ signal }, 'api shutting down');
    const force = setTimeout(() => process.exit(1), config.shutdownGraceMs).unref();
    server.close(() => {
      void closeAppDeps(deps).finally(() => {
        clearTimeout(force);
        process.exit(0);
      });
    });
    server.closeIdleConnections();
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

try {
  start();
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
}
