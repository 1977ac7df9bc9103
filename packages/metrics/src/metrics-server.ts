import { createServer, type Server } from 'node:http';
import type { Logger } from '@booking/logging';
import type { Registry } from 'prom-client';

/**
 * GET /metrics for Prometheus and GET /healthz for the orchestrator (200 while the process
 * answers), on all interfaces of `port`. A failed scrape is a 500 and a log line, never a crash.
 */
export function serveMetrics(
  registry: Registry,
  options: {
    port: number;
    logger: Logger;
    /** The setting that chooses the port, named in the log line when the port is taken. */
    portSetting: string;
  },
): Server {
  const { port, logger, portSetting } = options;
  const server = createServer((req, res) => {
    if (req.url === '/metrics') {
      registry
        .metrics()
        .then((text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text))
        .catch((error: unknown) => {
          logger.warn({ err: error }, 'metrics scrape failed');
          res.writeHead(500).end();
        });
    } else if (req.url === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"status":"ok"}');
    } else {
      res.writeHead(404).end();
    }
  });
  // A taken port (say, a second process of the same kind on the host) costs the metrics, not the work.
  server.on('error', (error) => logger.error({ err: error, port }, `metrics server not listening; set ${portSetting}`));
  return server.listen(port);
}
