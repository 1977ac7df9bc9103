import { createServer, type Server } from 'node:http';
import type { Logger } from '@booking/logging';

/** GET /healthz for the orchestrator: 200 while the worker process answers. */
export function serveWorkerHealth(port: number, logger: Logger): Server {
  const server = createServer((req, res) => {
    if (req.url === '/healthz') res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"status":"ok"}');
    else res.writeHead(404).end();
  });
  // A taken port (a second worker on the host) costs the health check, not the jobs.
  server.on('error', (error) =>
    logger.error({ err: error, port }, 'worker health server not listening; set WORKER_HEALTH_PORT'),
  );
  return server.listen(port);
}
