import { AppError } from '@booking/domain';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { isBackendUnavailable } from './backend-unavailable';
import { ERROR_STATUSES } from './error-statuses';
import { timedOut } from './request-deadline';
import { askToRetryLater } from './retry-after';

/**
 * What Express's router and body-parser throw for a bad request: http-errors' shape, a 4xx
 * `status` and `expose: true` (its message is meant for the client). body-parser names its
 * cases in `type`; zlib's errors, for a body not encoded as its Content-Encoding says, have
 * no `type`, only zlib's `code`.
 */
interface ClientHttpError {
  status: number;
  type?: string;
  code?: unknown;
}

function isClientHttpError(error: unknown): error is ClientHttpError {
  if (typeof error !== 'object' || error === null) return false;
  const { status, expose } = error as { status?: unknown; expose?: unknown };
  return expose === true && typeof status === 'number' && status >= 400 && status < 500;
}

/** The router's failure to percent-decode a path parameter: a URIError given status 400 but no `expose`. */
function isUndecodablePath(error: unknown): boolean {
  return error instanceof URIError && (error as URIError & { status?: unknown }).status === 400;
}

/**
 * A client's HTTP error as one of our codes. Besides size (413) and encoding or charset (415),
 * everything Express and body-parser refuse is about the request body, so the rest is
 * invalid_body, whatever their status: a new case can never become a 500.
 */
function fromClientHttpError(error: ClientHttpError): AppError {
  if (error.status === 413) return new AppError('payload_too_large');
  if (error.status === 415) return new AppError('unsupported_media_type');
  if (error.type === 'entity.parse.failed') return new AppError('invalid_body', 'request body is not valid JSON');
  if (error.type === undefined && typeof error.code === 'string') {
    return new AppError('invalid_body', 'request body is not encoded as its Content-Encoding says');
  }
  return new AppError('invalid_body');
}

/** Turns anything thrown into the spec's Error shape; internals of unexpected errors never leave the process. */
function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isUndecodablePath(error))
    return new AppError('invalid_path', 'a path segment is not valid percent-encoded UTF-8');
  if (isClientHttpError(error)) return fromClientHttpError(error);
  if (isBackendUnavailable(error)) return new AppError('service_unavailable');
  return new AppError('internal_error');
}

/** A statement the request deadline refused (57014, see request-deadline), or a transaction it timed out (Prisma's P2028). */
function cutOffByDeadline(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '57014' || code === 'P2028';
}

export const errorHandler: ErrorRequestHandler = (error, req, res, _next) => {
  const appError = toAppError(error);
  const status = ERROR_STATUSES[appError.code];
  // An answer the code chose (a replica draining, terms that kept changing, any 4xx) is recorded
  // by the summary line. What was thrown unplanned or by a backend that failed is logged with its
  // stack at error, and so is the failure behind a planned 5xx (Stripe away); behind a planned
  // 4xx (a refund left pending while Stripe is away) at warn. Work the request deadline cut off
  // after it answered (a statement refused, a transaction timed out) is warn too.
  if (timedOut(res) && cutOffByDeadline(error)) {
    req.log.warn({ err: error }, 'work given up after the request deadline answered');
  } else if (status >= 500 && (!(error instanceof AppError) || error.cause !== undefined)) {
    req.log.error({ err: error }, 'request failed');
  } else if (error instanceof AppError && error.cause !== undefined) {
    req.log.warn({ err: error }, 'request answered after a failure');
  }
  // Answered already, nothing more can be sent; but what the request deadline answered for still
  // goes to the idempotency record (captureResponse), so a retry finds the late refusal instead of
  // an in-flight key. The deadline drops the late headers and body.
  if (res.headersSent && !timedOut(res)) return;
  // The request's summary line (request-logger) names the code it was answered.
  res.locals.errorCode = appError.code;
  if (appError.code === 'service_unavailable') askToRetryLater(res);
  res
    .status(status)
    .json(appError.detail === undefined ? { error: appError.code } : { error: appError.code, detail: appError.detail });
};

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new AppError('not_found', `no route for ${req.method} ${req.path}`));
};
