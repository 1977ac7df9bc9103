import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { AppError } from '@booking/domain';
import { createLogger } from '@booking/logging';
import express from 'express';
import pino from 'pino';
import Stripe from 'stripe';
import request from 'supertest';
import { errorHandler } from './error-handler';
import { deadlinePassed, requestDeadline } from './request-deadline';
import { requestLogger } from './request-logger';

interface Line {
  level: number;
  msg: string;
  res?: { statusCode: number };
  error?: string;
  err?: { message: string; stack?: string };
}

const WARN = 40;
const ERROR = 50;

/** The API's logging and error middleware around routes that answer each way, and the lines they log. */
function appLogging(deadlineMs = 200) {
  const lines: Line[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString('utf8')) as Line);
        done();
      },
    }),
  );
  let slowStarted: () => void = () => undefined;
  const slow = new Promise<void>((resolve) => (slowStarted = resolve));
  const app = express().use(requestLogger(logger)).use(requestDeadline(deadlineMs));
  app.get('/ok', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/logs', (req, res) => {
    req.log.info('from the route');
    req.log.info('again');
    res.json({ ok: true });
  });
  app.get('/draining', () => {
    throw new AppError('service_unavailable', { draining: true });
  });
  app.get('/no-payments', () => {
    throw new AppError('payments_not_configured');
  });
  app.get('/backend-down', () => {
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  });
  app.get('/bug', () => {
    throw new TypeError("Cannot read properties of undefined (reading 'id')");
  });
  app.get('/stripe-down', () => {
    throw new AppError('service_unavailable', undefined, {
      cause: new Error('An error occurred with our connection to Stripe.'),
    });
  });
  app.get('/refund-pending', () => {
    throw new AppError('refund_in_progress', { refund_id: 'r1' }, { cause: new Error('Stripe did not answer') });
  });
  app.get('/cut-off', async () => {
    await new Promise((resolve) => setTimeout(resolve, deadlineMs + 100));
    throw deadlinePassed('the request deadline has passed; statement not sent');
  });
  app.get('/slow', async () => {
    slowStarted();
    await new Promise((resolve) => setTimeout(resolve, 400));
  });
  app.use(errorHandler);
  return { app, lines, slow };
}

/** The lines logged so far, once `count` are in (a summary line is written on the response's close). */
async function linesOf(lines: Line[], count: number): Promise<Line[]> {
  for (let waited = 0; lines.length < count && waited < 2_000; waited += 10) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return lines.map(({ level, msg, res, error, err }) => ({
    level,
    msg,
    ...(res && { res }),
    ...(error && { error }),
    ...(err && { err: { message: err.message } }),
  }));
}

describe('request logging and 5xx answers', () => {
  it('when a request succeeds, then its summary line is info', async () => {
    const { app, lines } = appLogging();
    await request(app).get('/ok').expect(200);
    expect(await linesOf(lines, 1)).toEqual([{ level: 30, msg: 'request completed', res: { statusCode: 200 } }]);
  });

  it("when a route logs through req.log, then its lines carry the request's id, method and redacted url", async () => {
    const { app, lines } = appLogging();
    const res = await request(app).get('/logs?token=secret').set('X-Request-Id', 'trace-1').expect(200);
    expect(res.headers['x-request-id']).toBe('trace-1');
    await linesOf(lines, 3);
    const fromRoute = lines.filter((line) => line.msg !== 'request completed') as (Line & { req?: object })[];
    expect(fromRoute.map((line) => [line.msg, line.req])).toEqual([
      ['from the route', { id: 'trace-1', method: 'GET', url: '/logs?token=[redacted]' }],
      ['again', { id: 'trace-1', method: 'GET', url: '/logs?token=[redacted]' }],
    ]);
  });

  it('when a request was not seen by the request logger, then req.log says so rather than logging without it', async () => {
    let read: () => unknown = () => undefined;
    const bare = express().get('/', (req, res) => {
      read = () => req.log;
      res.end();
    });
    await request(bare).get('/').expect(200);
    expect(read).toThrow('req.log is available on requests the request logger has seen');
  });

  it('when the API answers 503 service_unavailable on purpose (a draining replica), then Retry-After: 1 and one warn line, no error line', async () => {
    const { app, lines } = appLogging();
    const res = await request(app).get('/draining');
    expect([res.status, res.headers['retry-after'], res.body]).toEqual([
      503,
      '1',
      { error: 'service_unavailable', detail: { draining: true } },
    ]);
    expect(await linesOf(lines, 1)).toEqual([
      { level: WARN, msg: 'request completed', res: { statusCode: 503 }, error: 'service_unavailable' },
    ]);
  });

  it('when a 503 is not a passing state (payments not configured), then it has no Retry-After', async () => {
    const { app, lines } = appLogging();
    const res = await request(app).get('/no-payments');
    expect([res.status, res.headers['retry-after'], res.body.error]).toEqual([
      503,
      undefined,
      'payments_not_configured',
    ]);
    expect((await linesOf(lines, 1)).map((line) => line.level)).toEqual([WARN]);
  });

  it('when a backend failure is answered 503, then Retry-After: 1, and the failure is logged at error with its stack', async () => {
    const { app, lines } = appLogging();
    const res = await request(app).get('/backend-down');
    expect([res.status, res.headers['retry-after'], res.body]).toEqual([503, '1', { error: 'service_unavailable' }]);
    expect(await linesOf(lines, 2)).toEqual([
      { level: ERROR, msg: 'request failed', err: { message: 'connect ECONNREFUSED 127.0.0.1:5432' } },
      { level: WARN, msg: 'request completed', res: { statusCode: 503 }, error: 'service_unavailable' },
    ]);
    expect(lines[0]!.err!.stack).toContain('request-logger.test.ts');
  });

  it('when something unplanned is thrown, then 500 internal_error, logged at error twice: the failure with its stack and the summary', async () => {
    const { app, lines } = appLogging();
    const res = await request(app).get('/bug');
    expect([res.status, res.headers['retry-after'], res.body]).toEqual([500, undefined, { error: 'internal_error' }]);
    expect(await linesOf(lines, 2)).toEqual([
      { level: ERROR, msg: 'request failed', err: { message: "Cannot read properties of undefined (reading 'id')" } },
      { level: ERROR, msg: 'request completed', res: { statusCode: 500 }, error: 'internal_error' },
    ]);
  });

  it('when Stripe is away behind a planned 503, then its failure is logged at error as the cause', async () => {
    const { app, lines } = appLogging();
    const res = await request(app).get('/stripe-down');
    expect([res.status, res.headers['retry-after'], res.body]).toEqual([503, '1', { error: 'service_unavailable' }]);
    expect(await linesOf(lines, 2)).toEqual([
      {
        level: ERROR,
        msg: 'request failed',
        err: { message: 'service_unavailable: An error occurred with our connection to Stripe.' },
      },
      { level: WARN, msg: 'request completed', res: { statusCode: 503 }, error: 'service_unavailable' },
    ]);
  });

  it('when a planned 4xx has a failure behind it (a refund left pending while Stripe is away), then that failure is logged at warn', async () => {
    const { app, lines } = appLogging();
    const res = await request(app).get('/refund-pending');
    expect([res.status, res.body.error]).toEqual([409, 'refund_in_progress']);
    expect(await linesOf(lines, 2)).toEqual([
      {
        level: WARN,
        msg: 'request answered after a failure',
        err: { message: 'refund_in_progress: Stripe did not answer' },
      },
      { level: WARN, msg: 'request completed', res: { statusCode: 409 }, error: 'refund_in_progress' },
    ]);
  });

  it('when the request deadline answers 503, then it carries Retry-After: 1, and the work it cut off is logged at warn, not error', async () => {
    const { app, lines } = appLogging();
    const res = await request(app).get('/cut-off');
    expect([res.status, res.headers['retry-after'], res.body.error]).toEqual([503, '1', 'service_unavailable']);
    expect(await linesOf(lines, 2)).toEqual([
      { level: WARN, msg: 'request completed', res: { statusCode: 503 }, error: 'service_unavailable' },
      {
        level: WARN,
        msg: 'work given up after the request deadline answered',
        err: { message: 'the request deadline has passed; statement not sent' },
      },
    ]);
  });

  it('when the client goes away before its answer, then "request aborted" at warn', async () => {
    // A deadline far off: the client leaves first.
    const { app, lines, slow } = appLogging(5_000);
    const server = http.createServer(app).listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const { port } = server.address() as AddressInfo;
      const client = http.get({ host: '127.0.0.1', port, path: '/slow' });
      client.on('error', () => undefined);
      await slow;
      client.destroy();
      expect(await linesOf(lines, 1)).toEqual([{ level: WARN, msg: 'request aborted', res: { statusCode: 200 } }]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('when a Stripe error carrying a PaymentIntent is logged, itself or as a cause, then its client_secret is not', async () => {
    const chunks: string[] = [];
    const logger = createLogger(
      'info',
      'api',
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          chunks.push(chunk.toString('utf8'));
          done();
        },
      }),
    );
    const declined = () =>
      new Stripe.errors.StripeCardError({
        type: 'card_error',
        message: 'Your card was declined.',
        code: 'card_declined',
        payment_intent: { id: 'pi_123', client_secret: 'pi_123_secret_SHOULD_NOT_LEAK' },
        setup_intent: { id: 'seti_123', client_secret: 'seti_123_secret_SHOULD_NOT_LEAK' },
      } as never);
    const app = express().use(requestLogger(logger));
    app.get('/thrown', () => {
      throw declined();
    });
    app.get('/as-cause', () => {
      throw new AppError('service_unavailable', undefined, { cause: declined() });
    });
    app.use(errorHandler);

    await request(app).get('/thrown').expect(500);
    await request(app).get('/as-cause').expect(503);

    const text = chunks.join('');
    expect(text).toContain('Your card was declined.');
    expect(text).toContain('pi_123');
    expect(text).not.toContain('SHOULD_NOT_LEAK');
  });
});
