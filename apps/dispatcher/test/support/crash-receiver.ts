import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, type WebhookEnvelope } from '@booking/webhook-verify';

/** One request as a receiver saw it, checked with the receiver package. */
export interface Receipt {
  /** X-Service-Delivery-Id. */
  deliveryId: string | undefined;
  /** The verified envelope, or null when verification failed (see verifyError). */
  envelope: WebhookEnvelope | null;
  verifyError: string | null;
  rawBody: string;
  receivedAt: number;
  /** The status answered; null while held, or if the sender went away first. */
  status: number | null;
  /** The sender hung up before any answer (e.g. its process was killed). */
  droppedUnanswered: boolean;
}

/**
 * What to do with a request: a status to answer with, or 'hold' to never answer. `seen` counts
 * the requests so far with this delivery id, this one included.
 */
export type Respond = (receipt: Receipt, seen: number) => number | 'hold';

export interface Receiver {
  url: string;
  receipts: Receipt[];
  /** Receipts of one delivery id, in arrival order. */
  of(deliveryId: string): Receipt[];
  /** Verify from now on with this secret (e.g. the one the API handed out for a new endpoint). */
  useSecret(secret: string): void;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 that verifies every request against `secret`. */
export async function startReceiver(secret: string, respond: Respond = () => 200): Promise<Receiver> {
  let current = secret;
  const receipts: Receipt[] = [];
  const seen = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const header = req.headers['x-service-delivery-id'];
      const receipt: Receipt = {
        deliveryId: typeof header === 'string' ? header : undefined,
        envelope: null,
        verifyError: null,
        rawBody,
        receivedAt: Date.now(),
        status: null,
        droppedUnanswered: false,
      };
      try {
        receipt.envelope = verifyWebhook({ rawBody, headers: req.headers, secrets: current });
      } catch (error) {
        receipt.verifyError = error instanceof Error ? error.message : String(error);
      }
      receipts.push(receipt);
      const count = (seen.get(receipt.deliveryId ?? '') ?? 0) + 1;
      seen.set(receipt.deliveryId ?? '', count);
      res.on('close', () => {
        if (receipt.status === null) receipt.droppedUnanswered = true;
      });
      const decision = respond(receipt, count);
      if (decision === 'hold') return;
      receipt.status = decision;
      res.writeHead(decision, { 'content-type': 'text/plain' }).end(decision < 300 ? 'ok' : 'not now');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    receipts,
    of: (deliveryId) => receipts.filter((receipt) => receipt.deliveryId === deliveryId),
    useSecret: (next) => {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
