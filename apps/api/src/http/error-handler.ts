import { AppError } from '@booking/domain';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { isBackendUnavailable } from './backend-unavailable';
import { ERROR_STATUSES } from './error-statuses';

interface BodyParserError {
  type: string;
  status?: number;
}

function isBodyParserError(error: unknown): error is BodyParserError {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as BodyParserError).type === 'string' &&
    'status' in error
  );
}

/** Turns anything thrown into the spec's Error shape; internals of unexpected errors never leave the process. */
function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isBodyParserError(error)) {
    switch (error.type) {
      case 'entity.too.large':
        return new AppError('payload_too_large');
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return new AppError('unsupported_media_type');
      case 'entity.parse.failed':
        return new AppError('invalid_body', 'request body is not valid JSON');
      default:
        return new AppError('invalid_body');
    }
  }
  if (isBackendUnavailable(error)) return new AppError('service_unavailable');
  return new AppError('internal_error');
}

export const errorHandler: ErrorRequestHandler = (error, req, res, _next) => {
  const appError = toAppError(error);
  const status = ERROR_STATUSES[appError.code];
  if (status >= 500) req.log.error({ err: error }, 'request failed');
  if (res.headersSent) return;
  res
    .status(status)
    .json(appError.detail === undefined ? { error: appError.code } : { error: appError.code, detail: appError.detail });
};

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new AppError('not_found', `no route for ${req.method} ${req.path}`));
};
