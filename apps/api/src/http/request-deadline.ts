import { AsyncLocalStorage } from 'node:async_hooks';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import type { RequestHandler, Response } from 'express';
import { askToRetryLater } from './retry-after';

/** The deadline (epoch milliseconds) of the request whose work is running. */
const deadlines = new AsyncLocalStorage<number>();

/**
 * Answers 503 `service_unavailable` to a request still unanswered `timeoutMs` after it arrived,
 * so every request ends within a bounded time whatever PostgreSQL, Redis or a handler does.
 *
 * The handler keeps running: before answering, this sets `res.locals.timedOut` (see `timedOut`)
 * so that the idempotency middleware can keep the key in flight and store the late answer for a
 * retry. Whatever the late handler sends after that is dropped (see dropLateAnswer).
 *
 * The deadline is also the request's time budget for its transactions (see `timeLeftMs`), so no
 * transaction of the request sends its COMMIT after its client was told 503.
 */
export function requestDeadline(timeoutMs: number): RequestHandler {
  return (_req, res, next) => {
    const deadline = Date.now() + timeoutMs;
    const timer = setTimeout(() => {
      if (res.headersSent) return;
      res.locals.timedOut = true;
      res.locals.errorCode = 'service_unavailable';
      askToRetryLater(res);
      // A status the handler set before it went to work (`res.status(201).json(await work())`) is its answer's.
      res.locals.lateStatus = res.statusCode;
      res.status(503);
      dropLateAnswer(res);
      res.json({
        error: 'service_unavailable',
        detail: `no answer within ${timeoutMs} ms; the request may still complete, so retry it with the same Idempotency-Key`,
      });
    }, timeoutMs);
    // Answered, or the client went away: there is no one left to answer.
    res.once('close', () => clearTimeout(timer));
    deadlines.run(deadline, next);
  };
}

/**
 * From the moment the deadline's 503 is sent (which the idempotency middleware may hold back
 * until it has kept the key in flight), what the late handler sends is dropped: a header (Node
 * would throw ERR_HTTP_HEADERS_SENT) and a body (on a finished response Node raises
 * write-after-end as an 'error' event of the response, which nothing listens for, until the
 * response has closed). The status it sets is only noted, for `answeredStatus`.
 */
function dropLateAnswer(res: Response): void {
  res.status = ((code: number) => {
    res.locals.lateStatus = code;
    return res;
  }) as typeof res.status;
  const setHeader = res.setHeader.bind(res);
  const write = res.write.bind(res);
  const end = res.end.bind(res);
  res.setHeader = (name, value) => (res.headersSent ? res : setHeader(name, value));
  res.write = ((...args: Parameters<typeof write>) => (res.headersSent ? true : write(...args))) as typeof res.write;
  res.end = ((...args: Parameters<typeof end>) => (res.headersSent ? res : end(...args))) as typeof res.end;
}

/**
 * The status of the answer being sent: once the deadline's 503 is out, the one the late handler
 * set, before the deadline or since (Express's default 200 if none); the idempotency record keeps
 * the late answer for a retry (see idempotency's captureResponse).
 */
export function answeredStatus(res: Response): number {
  if (!timedOut(res) || !res.headersSent) return res.statusCode;
  return res.locals.lateStatus as number;
}

/** True once the request deadline answered 503 for this request. */
export function timedOut(res: Response): boolean {
  return res.locals.timedOut === true;
}

/**
 * Milliseconds left until the deadline of the request this code runs for (negative once past
 * it); undefined outside a request (start-up, sweeps, tests calling use cases directly).
 */
export function timeLeftMs(): number | undefined {
  const deadline = deadlines.getStore();
  return deadline === undefined ? undefined : deadline - Date.now();
}

/**
 * For the database client: refuses a statement of a request whose deadline has passed (its
 * client was told 503), shaped as PostgreSQL's own query_canceled (57014) so it is handled as
 * one. Transactions are bounded below; this covers the statements outside them.
 */
export function refuseStatementPastDeadline(): Error | undefined {
  const left = timeLeftMs();
  if (left === undefined || left > 0) return undefined;
  return deadlinePassed('the request deadline has passed; statement not sent');
}

/** The error of work given up at the request deadline, shaped as PostgreSQL's query_canceled. */
export function deadlinePassed(message: string): Error {
  return Object.assign(new Error(message), { code: '57014' });
}

type TransactionOptions = { maxWait?: number; timeout?: number; isolationLevel?: unknown };
type Transaction = (input: unknown, options?: TransactionOptions) => Promise<unknown>;

/**
 * `db` whose transactions, when begun for a request, end by the request's deadline: the wait to
 * begin (Prisma's `maxWait`) and the time to commit (`timeout`) together get at most the time
 * left, and a request with none left begins none (503). A COMMIT is thus never sent after the
 * deadline. Outside a request the client's own bounds apply unchanged.
 */
export function transactionsWithinDeadline(
  db: Db,
  bounds: { connectTimeoutMs: number; transactionTimeoutMs: number },
): Db {
  const transaction = db.$transaction.bind(db) as Transaction;
  const bounded: Transaction = (input, options) => {
    const left = timeLeftMs();
    if (left === undefined) return transaction(input, options);
    const maxWait = Math.min(options?.maxWait ?? bounds.connectTimeoutMs, left);
    const timeout = Math.min(options?.timeout ?? bounds.transactionTimeoutMs, left - maxWait);
    if (timeout <= 0) {
      return Promise.reject(new AppError('service_unavailable', 'the request has no time left for a transaction'));
    }
    return transaction(input, { ...options, maxWait, timeout });
  };
  return new Proxy(db, {
    get: (target, property, receiver) =>
      property === '$transaction' ? bounded : Reflect.get(target, property, receiver),
  });
}
