import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Structured JSON logs. Redaction is a second line of defence: request logs already leave out
 * headers, but anything that logs a header or a key by mistake still prints [Redacted].
 */
/** `destination` defaults to standard output. */
export function createLogger(level: string, service: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service },
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers["x-booking-token"]',
          'req.headers["x-manage-token"]',
          'req.headers["x-order-token"]',
          'req.headers["x-membership-token"]',
          'req.headers.cookie',
          '*.authorization',
          '*.token',
          '*.booking_token',
          '*.manage_token',
          '*.order_token',
          '*.member_token',
          '*.membership_token',
          '*.wallet_token',
          // Gift card codes by the names they travel under; not every `code`, which is how zlib,
          // PostgreSQL and Prisma name their diagnostic codes.
          '*.gift_card_code',
          '*.new_gift_card_code',
          'gift_card.code',
          '*.gift_card.code',
          '*.signing_secret',
          '*.secret',
          '*.password',
          // Stripe's errors carry the PaymentIntent, SetupIntent or Source they are about, each
          // with its client_secret, and an err logs its error's fields (its `raw` copy is left
          // out, and of a cause only the message and stack are kept).
          '*.client_secret',
          'err.*.client_secret',
        ],
      },
    },
    destination,
  );
}
