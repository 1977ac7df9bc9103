import type { RequestHandler } from 'express';
import { requestDuration } from './counters';
import { routeLabel } from './route-label';

/**
 * Times every request into `http_request_duration_seconds`. Per request it costs a clock
 * reading and a listener; the labels are read when the answer is sent, once the router has
 * matched the route. A request whose client went away before the answer is not counted.
 */
export const requestMetrics: RequestHandler = (req, res, next) => {
  const started = performance.now();
  res.once('finish', () => {
    requestDuration.observe(
      { method: req.method, route: routeLabel(req), status: res.statusCode },
      (performance.now() - started) / 1000,
    );
  });
  next();
};
