import type { RequestHandler } from 'express';

/**
 * Whether this API process is on its way out. A replica behind a load balancer must not simply
 * close its listener on SIGTERM: the balancer keeps sending it requests until its health check
 * notices, and kept-alive connections it holds to the replica would be cut mid-use. So first
 * the replica drains (main.ts): `/readyz` fails while every route still answers, until the
 * balancer has taken it out of rotation; only then does the listener close.
 */
export interface Drain {
  draining: boolean;
}

export function createDrain(): Drain {
  return { draining: false };
}

/**
 * While draining, every answer says `Connection: close`: the client (the proxy) opens its next
 * connection afresh, to a replica still in rotation, and none is left idle on this one to be
 * closed under a request the proxy is just sending.
 */
export function closeConnectionsWhileDraining(drain: Drain): RequestHandler {
  return (_req, res, next) => {
    if (drain.draining) res.setHeader('Connection', 'close');
    next();
  };
}
