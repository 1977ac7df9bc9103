import { ConfigError, loadConfig } from '@booking/config';
import { createApp } from './app';
import { closeAppDeps, createAppDeps } from './app-deps';
import { expireHeldBookings } from './bookings/expire-held-bookings';

const EXPIRY_SWEEP_MS = 60_000;

function start() {
  const config = loadConfig();
  const deps = createAppDeps(config);
  const server = createApp(deps).listen(config.port, () => {
    deps.logger.info({ port: config.port }, 'api listening');
  });

  // Every replica sweeps; SKIP LOCKED keeps them from cancelling one booking twice.
  const sweep = setInterval(() => {
    expireHeldBookings(deps, config.unpaidBookingExpirySeconds)
      .then((count) => count > 0 && deps.logger.info({ count }, 'cancelled unpaid held bookings'))
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'unpaid booking sweep failed'));
  }, EXPIRY_SWEEP_MS).unref();

  // Behind a load balancer: stop taking connections, let in-flight requests finish, then close.
  const shutdown = (signal: string) => {
    deps.logger.info({ signal }, 'api shutting down');
    clearInterval(sweep);
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
