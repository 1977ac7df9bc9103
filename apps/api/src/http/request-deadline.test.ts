import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import express from 'express';
import request from 'supertest';
import { requestDeadline, timedOut, transactionsWithinDeadline } from './request-deadline';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('requestDeadline', () => {
  it('when the handler answers in time, then its answer goes out untouched', async () => {
    const app = express().use(requestDeadline(200));
    app.get('/', (_req, res) => {
      res.status(201).json({ ok: true });
    });

    const res = await request(app).get('/');

    expect([res.status, res.body]).toEqual([201, { ok: true }]);
  });

  it('when the handler has not answered by the deadline, then 503 service_unavailable, and what the handler sends later is dropped without an error', async () => {
    const errors: unknown[] = [];
    const attempts: { timedOut: boolean; error: unknown }[] = [];
    const app = express().use(requestDeadline(100));
    app.get('/', (_req, res) => {
      res.on('error', (error) => errors.push(error));
      const answerLate = () => {
        try {
          res.setHeader('Idempotent-Replayed', 'true');
          res.write('{');
          res.status(200).json({ late: true });
          attempts.push({ timedOut: timedOut(res), error: undefined });
        } catch (error) {
          attempts.push({ timedOut: timedOut(res), error });
        }
      };
      // Answers late the moment the deadline's 503 ends (its end() emits prefinish), before Node
      // has closed the response: a body Node took then would be an 'error' event, which in a real
      // request nothing listens for. In the listener itself: a tick later Node has closed the
      // response and ignores what is written, so a body not dropped would go unseen. Within 2 s
      // anyway: with no 503 this answer goes out, and the status check fails.
      const fallback = setTimeout(answerLate, 2_000);
      res.once('prefinish', () => {
        clearTimeout(fallback);
        answerLate();
      });
    });

    const res = await request(app).get('/');

    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'service_unavailable', detail: expect.stringContaining('100 ms') });
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(attempts).toEqual([{ timedOut: true, error: undefined }]);
    expect(errors).toEqual([]);
  });
});

describe('transactionsWithinDeadline', () => {
  const bounds = { connectTimeoutMs: 500, transactionTimeoutMs: 1_000 };

  /** A stand-in client whose $transaction reports the options it was given. */
  function fakeDb() {
    const transaction = jest.fn(async (_input: unknown, options?: unknown) => options);
    return { db: { $transaction: transaction, slot: 'a model' } as unknown as Db, transaction };
  }

  /** Runs `work` for a request with a deadline `timeoutMs` away; what it returned or threw. */
  async function inRequest(timeoutMs: number, work: () => Promise<unknown>) {
    let outcome: Promise<{ result?: unknown; error?: unknown }> | undefined;
    const app = express().use(requestDeadline(timeoutMs));
    app.get('/', (_req, res) => {
      outcome = work().then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      );
      void outcome.then(() => res.end());
    });
    await request(app).get('/');
    return outcome!;
  }

  it('when a transaction begins outside a request, then the client keeps its own bounds', async () => {
    const { db, transaction } = fakeDb();

    await transactionsWithinDeadline(db, bounds).$transaction(async () => undefined);

    expect(transaction).toHaveBeenCalledWith(expect.any(Function), undefined);
  });

  it('when a transaction begins for a request, then waiting to begin and running fit together in the time left', async () => {
    const { db } = fakeDb();
    const bounded = transactionsWithinDeadline(db, bounds);

    const early = await inRequest(5_000, () => bounded.$transaction(async () => undefined));
    const late = await inRequest(800, () => bounded.$transaction(async () => undefined));

    expect(early.result).toEqual({ maxWait: 500, timeout: 1_000 });
    const { maxWait, timeout } = late.result as { maxWait: number; timeout: number };
    expect(maxWait).toBe(500);
    expect(timeout).toBeLessThanOrEqual(300);
    expect(timeout).toBeGreaterThan(200);
  });

  it('when a request has no time left, then its transaction does not begin and it is service_unavailable', async () => {
    const { db, transaction } = fakeDb();
    const bounded = transactionsWithinDeadline(db, bounds);

    const { error } = await inRequest(100, async () => {
      await sleep(150);
      return bounded.$transaction(async () => undefined);
    });

    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('service_unavailable');
    expect(transaction).not.toHaveBeenCalled();
  });

  it('when anything else of the client is used, then it is the client itself', () => {
    const { db } = fakeDb();

    expect((transactionsWithinDeadline(db, bounds) as unknown as { slot: string }).slot).toBe('a model');
  });
});
