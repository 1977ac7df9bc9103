import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { createBillingState, type FakeBilling } from './fake-stripe-billing';
import { billingRouter } from './fake-stripe-billing-routes';
import { givesBack, refundAnswers, type FakeRefundStatus } from './fake-stripe-refund-answers';

// A small stand-in for the Stripe HTTP API, enough for the app's real `stripe` SDK pointed at it
// through STRIPE_API_BASE: PaymentIntents (create, retrieve, cancel) and refunds, with Stripe's
// Idempotency-Key behaviour, a log of every request, and refund failures on demand. Stripe Billing
// (customers, prices, subscriptions, invoices) is in fake-stripe-billing*.ts.

type Form = Record<string, unknown>;

export interface RecordedRequest {
  method: string;
  path: string;
  /** The form body as Stripe would read it: `metadata[booking_id]=x` becomes `{ metadata: { booking_id: 'x' } }`. */
  body: Form;
  idempotencyKey: string | undefined;
  /** The status the fake answered with. */
  status: number;
}

export interface FakePaymentIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  currency: string;
  client_secret: string;
  status: string;
  metadata: Record<string, string>;
  amount_received: number;
  automatic_payment_methods: { enabled: boolean } | null;
  payment_method_types: string[];
  livemode: false;
  created: number;
}

export interface FakeRefund {
  id: string;
  object: 'refund';
  /** Tests may change it, as Stripe does later, then notify it (signedRefundEvent). */
  status: FakeRefundStatus;
  amount: number;
  currency: string;
  payment_intent: string;
  metadata: Record<string, string>;
  created: number;
}

interface Reply {
  status: number;
  body: unknown;
  /** A 5xx kept for its idempotency key: Stripe's own failure after the request began. */
  kept?: true;
}

export interface FakeStripe {
  /** `http://127.0.0.1:<port>`, for STRIPE_API_BASE. */
  url: string;
  port: number;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** PaymentIntents by id. */
  intents: Map<string, FakePaymentIntent>;
  /** Refunds actually created (a replayed idempotent request creates none). */
  refunds: FakeRefund[];
  /** The next `count` POST /v1/refunds answer 500 (nothing is created, nothing is kept for the key). */
  failNextRefunds(count: number): void;
  /**
   * The next `count` POST /v1/refunds fail with Stripe's own 500 after the request began: nothing
   * is created, and the 500 is kept for the key, so the same key is answered it again (Stripe
   * does so for 24 hours).
   */
  failNextRefundsForTheirKeys(count: number): void;
  /**
   * The next `count` POST /v1/refunds answer 429 rate_limit_error, as Stripe does before it looks
   * at the request's key: nothing is created and nothing is kept for the key.
   */
  rateLimitNextRefunds(count: number): void;
  /**
   * Stripe no longer knows the intent (a key of another account or mode, say): asking for its
   * refunds, or listing them, answers 404 resource_missing.
   */
  forgetIntent(intentId: string): void;
  /** The next `count` POST /v1/refunds take effect at once but answer `ms` later (a slow Stripe). */
  delayNextRefunds(count: number, ms: number): void;
  /** The next POST /v1/refunds make their refunds with these statuses, in order (then `succeeded`). */
  answerNextRefunds(...statuses: FakeRefundStatus[]): void;
  /** Marks an intent paid, as Stripe does when the customer's card clears, and returns it. */
  succeed(intentId: string): FakePaymentIntent;
  /** Stripe Billing: its objects by id, and controls for what Stripe does on its own (renewals, retries). */
  billing: FakeBilling;
  /** Requests matching a method and path (exact string, or a RegExp). */
  requestsTo(method: string, path: string | RegExp): RecordedRequest[];
  stop(): Promise<void>;
}

function id(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

/** Decodes the SDK's form encoding (`a[b]=1&a[c][0]=2`) into nested objects. */
export function parseStripeForm(text: string): Form {
  const root: Form = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const [head, ...rest] = key.split('[');
    const path = [head!, ...rest.map((part) => part.replace(/\]$/, ''))];
    let node: Form = root;
    path.forEach((segment, index) => {
      if (index === path.length - 1) {
        node[segment] = value;
      } else {
        node[segment] ??= {};
        node = node[segment] as Form;
      }
    });
  }
  return root;
}

function stripeError(status: number, type: string, message: string, extra: Record<string, unknown> = {}): Reply {
  return { status, body: { error: { type, message, ...extra } } };
}

function toInt(value: unknown): number {
  return typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startFakeStripe(): Promise<FakeStripe> {
  const requests: RecordedRequest[] = [];
  const intents = new Map<string, FakePaymentIntent>();
  const refunds: FakeRefund[] = [];
  // Like Stripe: the first request with a key fixes the answer; the same key again replays it.
  const idempotent = new Map<string, { fingerprint: string; reply: Reply }>();
  let refundFailures = 0;
  let keptRefundFailures = 0;
  let refundRateLimits = 0;
  const forgotten = new Set<string>();
  const refundDelays = { count: 0, ms: 0 };
  const answers = refundAnswers();
  const billing = createBillingState(intents);
  const routeBilling = billingRouter(billing);

  function createIntent(body: Form): Reply {
    const amount = toInt(body.amount);
    const currency = typeof body.currency === 'string' ? body.currency.toLowerCase() : '';
    if (!Number.isSafeInteger(amount) || amount < 1) {
      return stripeError(400, 'invalid_request_error', 'Invalid integer: amount', {
        param: 'amount',
        code: 'parameter_invalid_integer',
      });
    }
    if (!/^[a-z]{3}$/.test(currency))
      return stripeError(400, 'invalid_request_error', 'Invalid currency', { param: 'currency' });
    // Stripe's minimum charge (0.50 in USD and most currencies).
    if (amount < 50) {
      return stripeError(400, 'invalid_request_error', 'Amount must be at least $0.50 usd', {
        param: 'amount',
        code: 'amount_too_small',
      });
    }
    // And its maximum (999,999.99 in USD): a refusal a client's valid amount can meet.
    if (amount > 99_999_999) {
      return stripeError(400, 'invalid_request_error', 'Amount must be no more than $999,999.99', {
        param: 'amount',
        code: 'amount_too_large',
      });
    }
    const intentId = id('pi');
    const automatic = body.automatic_payment_methods as Form | undefined;
    const intent: FakePaymentIntent = {
      id: intentId,
      object: 'payment_intent',
      amount,
      currency,
      client_secret: `${intentId}_secret_${randomBytes(12).toString('hex')}`,
      status: 'requires_payment_method',
      metadata: { ...((body.metadata as Record<string, string> | undefined) ?? {}) },
      amount_received: 0,
      automatic_payment_methods: automatic ? { enabled: automatic.enabled === 'true' } : null,
      // What the intent allows, as Stripe answers it (the card alone when nothing narrows it here).
      payment_method_types: body.allowed_payment_method_types
        ? Object.values(body.allowed_payment_method_types as Form).map(String)
        : ['card'],
      livemode: false,
      created: Math.floor(Date.now() / 1000),
    };
    intents.set(intentId, intent);
    return { status: 200, body: intent };
  }

  function createRefund(body: Form): Reply {
    const intent = typeof body.payment_intent === 'string' ? intents.get(body.payment_intent) : undefined;
    if (!intent) {
      return stripeError(404, 'invalid_request_error', `No such payment_intent: '${String(body.payment_intent)}'`, {
        code: 'resource_missing',
        param: 'payment_intent',
      });
    }
    const already = refunds
      .filter((refund) => refund.payment_intent === intent.id && givesBack(refund))
      .reduce((sum, refund) => sum + refund.amount, 0);
    const amount = body.amount === undefined ? intent.amount_received - already : toInt(body.amount);
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > intent.amount_received - already) {
      return stripeError(400, 'invalid_request_error', 'Charge has already been refunded or the amount is too large', {
        code: 'charge_already_refunded',
      });
    }
    const refund: FakeRefund = {
      id: id('re'),
      object: 'refund',
      status: answers.next(),
      amount,
      currency: intent.currency,
      payment_intent: intent.id,
      metadata: { ...((body.metadata as Record<string, string> | undefined) ?? {}) },
      created: Math.floor(Date.now() / 1000),
    };
    refunds.push(refund);
    return { status: 200, body: refund };
  }

  function route(method: string, path: string, body: Form): Reply {
    const billed = routeBilling(method, path, body);
    if (billed) return billed;
    if (method === 'POST' && path === '/v1/payment_intents') return createIntent(body);
    const match = /^\/v1\/payment_intents\/([^/]+)$/.exec(path);
    if (method === 'GET' && match) {
      const intent = intents.get(decodeURIComponent(match[1]!));
      return intent
        ? { status: 200, body: intent }
        : stripeError(404, 'invalid_request_error', `No such payment_intent: '${match[1]}'`, {
            code: 'resource_missing',
            param: 'intent',
          });
    }
    const cancel = /^\/v1\/payment_intents\/([^/]+)\/cancel$/.exec(path);
    if (method === 'POST' && cancel) {
      const intent = intents.get(decodeURIComponent(cancel[1]!));
      if (!intent) return stripeError(404, 'invalid_request_error', `No such payment_intent: '${cancel[1]}'`);
      // Like Stripe: a succeeded or already cancelled intent cannot be cancelled.
      if (intent.status === 'succeeded' || intent.status === 'canceled') {
        return stripeError(400, 'invalid_request_error', `This PaymentIntent's status is ${intent.status}`, {
          code: 'payment_intent_unexpected_state',
        });
      }
      intent.status = 'canceled';
      return { status: 200, body: intent };
    }
    if (method === 'GET' && path === '/v1/refunds') {
      // Listed by payment_intent only, newest first like Stripe, in one page.
      if (typeof body.payment_intent !== 'string') {
        return stripeError(400, 'invalid_request_error', 'The fake lists refunds by payment_intent only', {
          param: 'payment_intent',
        });
      }
      if (forgotten.has(body.payment_intent)) {
        return stripeError(404, 'invalid_request_error', `No such payment_intent: '${body.payment_intent}'`, {
          code: 'resource_missing',
          param: 'payment_intent',
        });
      }
      const data = refunds.filter((refund) => refund.payment_intent === body.payment_intent).reverse();
      return { status: 200, body: { object: 'list', data, has_more: false, url: '/v1/refunds' } };
    }
    if (method === 'POST' && path === '/v1/refunds') {
      if (refundFailures > 0) {
        refundFailures -= 1;
        return stripeError(500, 'api_error', 'Fake Stripe was told to fail this refund');
      }
      if (keptRefundFailures > 0) {
        keptRefundFailures -= 1;
        return { ...stripeError(500, 'api_error', 'Fake Stripe failed this refund under its key'), kept: true };
      }
      return createRefund(body);
    }
    return stripeError(404, 'invalid_request_error', `Unrecognized request URL (${method}: ${path}).`);
  }

  const server = http.createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      const method = req.method ?? 'GET';
      const url = new URL(req.url ?? '/', 'http://fake-stripe');
      const path = url.pathname;
      // The SDK sends a GET's and a DELETE's parameters in the query string.
      const inQuery = method === 'GET' || method === 'DELETE';
      const body = parseStripeForm(inQuery ? url.searchParams.toString() : text);
      const keyHeader = req.headers['idempotency-key'];
      const idempotencyKey = Array.isArray(keyHeader) ? keyHeader[0] : keyHeader;

      let reply: Reply;
      const fingerprint = `${method} ${path} ${text}`;
      const stored = method === 'POST' && idempotencyKey ? idempotent.get(idempotencyKey) : undefined;
      if (method === 'POST' && path === '/v1/refunds' && refundRateLimits > 0) {
        refundRateLimits -= 1;
        reply = stripeError(429, 'invalid_request_error', 'Too many requests made to the API too quickly', {
          code: 'rate_limit',
        });
      } else if (stored && stored.fingerprint !== fingerprint) {
        reply = stripeError(
          400,
          'idempotency_error',
          `Keys for idempotent requests can only be used with the same parameters they were first used with.`,
        );
      } else if (stored) {
        reply = stored.reply;
        res.setHeader('Idempotent-Replayed', 'true');
      } else {
        reply = route(method, path, body);
        // A 500 here stands for a failure before the request took effect: nothing is kept, so a
        // retry with the same key runs again; unless told it failed after it began (kept).
        if (method === 'POST' && idempotencyKey && (reply.status < 500 || reply.kept))
          idempotent.set(idempotencyKey, { fingerprint, reply });
      }
      requests.push({ method, path, body, idempotencyKey, status: reply.status });
      if (method === 'POST' && path === '/v1/refunds' && refundDelays.count > 0) {
        refundDelays.count -= 1;
        await new Promise((resolve) => setTimeout(resolve, refundDelays.ms));
      }
      res.writeHead(reply.status, { 'Content-Type': 'application/json', 'Request-Id': id('req') });
      res.end(JSON.stringify(reply.body));
    })().catch((error: unknown) => {
      res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'api_error', message: String(error) } }));
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    intents,
    refunds,
    billing,
    delayNextRefunds(count: number, ms: number) {
      Object.assign(refundDelays, { count, ms });
    },
    answerNextRefunds: answers.queue,
    failNextRefunds(count: number) {
      refundFailures = count;
    },
    failNextRefundsForTheirKeys(count: number) {
      keptRefundFailures = count;
    },
    rateLimitNextRefunds(count: number) {
      refundRateLimits = count;
    },
    forgetIntent(intentId: string) {
      intents.delete(intentId);
      forgotten.add(intentId);
    },
    succeed(intentId: string) {
      const intent = intents.get(intentId);
      if (!intent) throw new Error(`fake Stripe has no PaymentIntent ${intentId}`);
      intent.status = 'succeeded';
      intent.amount_received = intent.amount;
      return intent;
    },
    requestsTo(method: string, path: string | RegExp) {
      return requests.filter(
        (r) => r.method === method && (typeof path === 'string' ? r.path === path : path.test(r.path)),
      );
    },
    stop() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        // The SDK keeps its sockets alive; without this close() would wait for them.
        server.closeAllConnections();
      });
    },
  };
}

export async function stopFakeStripe(fake: FakeStripe | undefined): Promise<void> {
  await fake?.stop();
}

// Only used to sign test events, with the SDK's own helper; it never makes a request.
const signer = new Stripe('sk_test_fake_signer');

export interface SignedEvent {
  /** The exact bytes to POST. */
  payload: string;
  /** The Stripe-Signature header for them. */
  signature: string;
  event: { id: string; type: string; data: { object: FakePaymentIntent } };
}

/** Signs any event body with the SDK's `webhooks.generateTestHeaderString`, as Stripe signs deliveries. */
export function signEvent<E extends { id: string; type: string; data: { object: unknown } }>(
  event: E,
  options: { secret: string; timestamp?: number },
): { payload: string; signature: string; event: E } {
  const payload = JSON.stringify(event);
  const signature = signer.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret,
    timestamp: options.timestamp,
  });
  return { payload, signature, event };
}

/**
 * A `payment_intent.succeeded` event as Stripe sends it, signed for `secret`. Reuse the result
 * to deliver the very same event again.
 */
export function signedPaymentSucceededEvent(
  intent: FakePaymentIntent,
  options: { secret: string; eventId?: string; timestamp?: number },
): SignedEvent {
  return signEvent(
    {
      id: options.eventId ?? id('evt'),
      object: 'event',
      api_version: Stripe.API_VERSION,
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type: 'payment_intent.succeeded',
      data: {
        object: {
          ...intent,
          status: 'succeeded',
          amount_received: intent.amount_received || intent.amount,
        } as FakePaymentIntent,
      },
    },
    options,
  );
}
