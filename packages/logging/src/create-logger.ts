import pino, { type Logger } from 'pino';

/**
 * Structured JSON logs. Redaction is a second line of defence: request logs already leave out
 * headers, but anything that logs a header or a key by mistake still prints [Redacted].
 */
export function createLogger(level: string, service: string): Logger {
  return pino({
    level,
    base: { service },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-booking-token"]',
        'req.headers["x-manage-token"]',
        'req.headers.cookie',
        '*.authorization',
        '*.token',
        '*.booking_token',
        '*.manage_token',
        '*.code',
        '*.gift_card_code',
        '*.signing_secret',
        '*.secret',
        '*.password',
      ],
    },
  });
}
