import type { RequestHandler } from 'express';

/**
 * `handlers` run one after another as ONE layer of the app's router, in the order given. Router
 * 2.x pays for every layer a request passes (matching, params, prefix, a check for a returned
 * promise), and every request passes the ones that observe it: together they cost it one.
 * Like the router, it hands a thrown error or a rejected promise to `next`.
 */
export function oneLayer(...handlers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let index = 0;
    const step = (error?: unknown) => {
      if (error !== undefined) return next(error);
      const handler = handlers[index++];
      if (!handler) return next();
      try {
        const returned: unknown = handler(req, res, step);
        if (returned instanceof Promise) returned.catch(next);
      } catch (thrown) {
        next(thrown);
      }
    };
    step();
  };
}
