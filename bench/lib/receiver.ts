import http from 'node:http';
import type net from 'node:net';
import { performance } from 'node:perf_hooks';

/**
 * The webhook receiver of every webhook run: node:http on 127.0.0.1, in the bench process,
 * answering 200 at once, or after `answerAfterMs` (a slow receiver).
 */
export interface Receiver {
  url: string;
  /** First arrival (performance.now()) by event id, for dispatcher deliveries. */
  arrivals: Map<string, number>;
  /** Requests by delivery id, to spot repeats. */
  receipts: Map<string, number>;
  /** TCP connections opened to it so far: how much the senders reuse them. */
  connections(): number;
  close(): Promise<void>;
}

export async function startReceiver({ answerAfterMs = 0 } = {}): Promise<Receiver> {
  const arrivals = new Map<string, number>();
  const receipts = new Map<string, number>();
  let connections = 0;
  const server = http.createServer((req, res) => {
    const at = performance.now();
    const deliveryId = String(req.headers['x-service-delivery-id'] ?? '');
    receipts.set(deliveryId, (receipts.get(deliveryId) ?? 0) + 1);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answer = () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      if (answerAfterMs > 0) setTimeout(answer, answerAfterMs).unref();
      else answer();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { event_id?: string } };
        const eventId = body.data?.event_id;
        if (eventId && !arrivals.has(eventId)) arrivals.set(eventId, at);
      } catch {
        // not a delivery
      }
    });
  });
  server.on('connection', () => (connections += 1));
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    arrivals,
    receipts,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
