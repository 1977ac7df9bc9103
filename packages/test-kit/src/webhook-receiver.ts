import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitUntil } from './wait';

/** One request as a webhook receiver saw it: headers and the exact raw body. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawBody: Buffer;
  body: string;
  /** X-Service-Delivery-Id, '' when absent. */
  deliveryId: string;
  event: string;
  /** Receiver clock when the request (headers and body) had arrived. */
  receivedAt: number;
  /** 1-based position among every request this receiver got. */
  index: number;
}

/** How a receiver answers one request. */
export interface ReceiverReply {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  /** Answer only after this long (or never, if the caller hangs up first). */
  delayMs?: number;
}

export type ReceiverBehaviour = (request: ReceivedRequest) => ReceiverReply;

/** Ready-made behaviours. */
export const answer = {
  ok: (): ReceiverReply => ({ status: 200, body: 'ok' }),
  status:
    (status: number, body = `status ${status}`): ReceiverBehaviour =>
    () => ({ status, body }),
  /** The first `count` requests get `status`, every later one 200. */
  failFirst:
    (count: number, status = 500): ReceiverBehaviour =>
    (request) =>
      request.index <= count ? { status, body: `failure ${request.index}` } : { status: 200, body: 'ok' },
};

/**
 * A real HTTP receiver on 127.0.0.1 and an ephemeral port. It records every request and answers
 * as its current behaviour says; it also tracks how many requests of each delivery id are open at
 * once (from arrival until the response is sent or the client hangs up).
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  /** Delivery ids that had two or more requests open at the same moment. */
  readonly overlapping = new Set<string>();
  private readonly open = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private behaviour: ReceiverBehaviour;

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
    behaviour: ReceiverBehaviour,
  ) {
    this.behaviour = behaviour;
  }

  static async start(behaviour: ReceiverBehaviour = answer.ok): Promise<WebhookReceiver> {
    const server = http.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const receiver = new WebhookReceiver(server, (server.address() as AddressInfo).port, behaviour);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => receiver.handle(req, res));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/webhooks`;
  }

  behave(behaviour: ReceiverBehaviour): void {
    this.behaviour = behaviour;
  }

  /** Requests of one delivery id, in arrival order. */
  of(deliveryId: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.deliveryId === deliveryId);
  }

  /** How many requests each delivery id got. */
  countsByDelivery(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const r of this.requests) counts.set(r.deliveryId, (counts.get(r.deliveryId) ?? 0) + 1);
    return counts;
  }

  /** Resolves once `predicate` holds for the recorded requests; rejects after `timeoutMs`. */
  waitFor(
    predicate: (requests: ReceivedRequest[]) => boolean,
    timeoutMs = 10_000,
    what = 'the expected requests',
  ): Promise<ReceivedRequest[]> {
    return waitUntil(() => predicate(this.requests) && this.requests, {
      timeoutMs,
      intervalMs: 10,
      what: () =>
        `receiver :${this.port} to get ${what}; got ${this.requests.length}: ` +
        JSON.stringify(this.requests.map((r) => ({ event: r.event, id: r.deliveryId }))),
    });
  }

  /** Resolves once at least `count` requests arrived. */
  waitForCount(count: number, timeoutMs = 10_000): Promise<ReceivedRequest[]> {
    return this.waitFor((requests) => requests.length >= count, timeoutMs, `${count} requests`);
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    const deliveryId = String(req.headers['x-service-delivery-id'] ?? '');
    this.open.set(deliveryId, (this.open.get(deliveryId) ?? 0) + 1);
    if ((this.open.get(deliveryId) ?? 0) > 1) this.overlapping.add(deliveryId);
    // 'close' fires once the response is sent or the client has hung up, whichever comes first.
    res.on('close', () => this.open.set(deliveryId, (this.open.get(deliveryId) ?? 1) - 1));

    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const request: ReceivedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawBody,
        body: rawBody.toString('utf8'),
        deliveryId,
        event: String(req.headers['x-service-event'] ?? ''),
        receivedAt: Date.now(),
        index: this.requests.length + 1,
      };
      this.requests.push(request);
      const reply = this.behaviour(request);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers }).end(reply.body ?? '');
      };
      if (reply.delayMs) {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          send();
        }, reply.delayMs);
        this.timers.add(timer);
        res.on('close', () => {
          clearTimeout(timer);
          this.timers.delete(timer);
        });
      } else {
        send();
      }
    });
  }
}
