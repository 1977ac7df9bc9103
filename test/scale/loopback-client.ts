import { randomInt } from 'node:crypto';
import http from 'node:http';

export interface Answer {
  status: number;
  /** The replica that answered, as the proxy names it (X-Served-By). */
  servedBy: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/**
 * A client that connects from its own loopback address (any 127.x.y.z is this machine's), so
 * the proxy sees it as a client of its own and writes that address into X-Forwarded-For: rate
 * limits and idempotency keys are per client address. Keeps its connections alive, as a browser
 * or an SDK does.
 */
export class LoopbackClient {
  readonly address: string;
  private readonly agent: http.Agent;

  constructor(
    private readonly baseUrl: string,
    address = randomLoopbackAddress(),
  ) {
    this.address = address;
    this.agent = new http.Agent({ keepAlive: true, localAddress: address, maxSockets: 32 });
  }

  request(method: 'GET' | 'POST', path: string, options: { headers?: Record<string, string>; body?: object } = {}) {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    return new Promise<Answer>((resolve, reject) => {
      const req = http.request(
        new URL(path, this.baseUrl),
        {
          method,
          agent: this.agent,
          headers: { ...(body ? { 'Content-Type': 'application/json' } : {}), ...options.headers },
          timeout: 15_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.once('error', reject);
          res.once('end', () => {
            const text = Buffer.concat(chunks).toString();
            let parsed: Record<string, unknown>;
            try {
              parsed = JSON.parse(text) as Record<string, unknown>;
            } catch {
              parsed = { unparsed: text.slice(0, 200) };
            }
            resolve({
              status: res.statusCode ?? 0,
              servedBy: String(res.headers['x-served-by'] ?? ''),
              headers: res.headers,
              body: parsed,
            });
          });
        },
      );
      req.once('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 15 s`)));
      req.once('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** A loopback address unlikely to repeat within a run (never 127.0.0.1, which every test shares). */
export function randomLoopbackAddress(): string {
  return `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
}
