import type { RequestHandler } from 'express';

/**
 * `handlers` run one after another as ONE layer of the app's router, in the order given. Router
 * 2.x pays for every layer a request passes (matching, params, prefix, a check for a returned
 * promise), and every request passes the ones that observe it: together they cost it one.
 *
 * `next` means what it means between layers: `next()` (or `next('route')`, which only matters
 * inside a route) goes on to the next handler, an error (or `'router'`) leaves for the app's
 * router, and so does a thrown error or a rejected promise, as the router hands them on.
 */
export function oneLayer(...handlers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let index = 0;
    const step = (error?: unknown) => {
      if (error && error !== 'route') return next(error);
      const handler = handlers[index++];
      if (!handler) return next();
      try {
        const returned: unknown = handler(req, res, step);
        if (isPromise(returned)) returned.then(undefined, (reason) => next(reason || new Error('Rejected promise')));
      } catch (thrown) {
        next(thrown);
      }
    };
    step();
  };
}

function isPromise(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as PromiseLike<unknown>).then === 'function';
}
