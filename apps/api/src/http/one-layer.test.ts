import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import request from 'supertest';
import { oneLayer } from './one-layer';

/** An app whose one layer is `handlers`, answering with the handlers that ran, or the error that left. */
function appOf(...handlers: RequestHandler[]) {
  const app = express();
  app.use((_req, res, next) => {
    res.locals.ran = [];
    next();
  });
  app.use(oneLayer(...handlers));
  app.get('/', (_req, res) => {
    res.json({ ran: res.locals.ran });
  });
  const answerError: ErrorRequestHandler = (error, _req, res, _next) => {
    res.status(500).json({ ran: res.locals.ran, error: error instanceof Error ? error.message : String(error) });
  };
  app.use(answerError);
  return app;
}

const mark =
  (name: string, then: (next: (error?: unknown) => void) => unknown = (next) => next()): RequestHandler =>
  (_req, res, next) => {
    (res.locals.ran as string[]).push(name);
    return then(next) as void;
  };

describe('oneLayer', () => {
  it('when every handler calls next, then they run in order and the request goes on to the routes', async () => {
    const res = await request(appOf(mark('a'), mark('b'), mark('c'))).get('/');
    expect(res.body).toEqual({ ran: ['a', 'b', 'c'] });
  });

  it("when a handler calls next('route'), then the next handler runs, as with separate layers", async () => {
    const res = await request(
      appOf(
        mark('a', (next) => next('route')),
        mark('b'),
      ),
    ).get('/');
    expect(res.body).toEqual({ ran: ['a', 'b'] });
  });

  it('when a handler passes an error, throws, or returns a rejected promise, then the rest are skipped and the error handler answers', async () => {
    const passed = await request(
      appOf(
        mark('a', (next) => next(new Error('passed'))),
        mark('b'),
      ),
    ).get('/');
    const thrown = await request(
      appOf(
        mark('a', () => {
          throw new Error('thrown');
        }),
        mark('b'),
      ),
    ).get('/');
    const rejected = await request(
      appOf(
        mark('a', () => Promise.reject(new Error('rejected'))),
        mark('b'),
      ),
    ).get('/');
    // A promise rejected without a reason still leaves as an error, as the router has it.
    const noReason = await request(
      appOf(
        mark('a', () => Promise.reject(undefined)),
        mark('b'),
      ),
    ).get('/');

    expect([passed.body, thrown.body, rejected.body, noReason.body]).toEqual([
      { ran: ['a'], error: 'passed' },
      { ran: ['a'], error: 'thrown' },
      { ran: ['a'], error: 'rejected' },
      { ran: ['a'], error: 'Rejected promise' },
    ]);
  });
});
