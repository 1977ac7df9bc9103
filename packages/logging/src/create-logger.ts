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
      serializers: { err: serializeError },
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

/** A cause's fields that say what failed and where, without anything it was about. */
const CAUSE_FIELDS = ['type', 'code', 'statusCode', 'requestId'] as const;

/**
 * pino's error serializer, plus the fields of the error's cause that name the failure at the
 * service that failed (a Stripe error's type, code, HTTP status and request id, which Stripe's
 * support asks for; a PostgreSQL error's code). Of a cause pino keeps only the message and the
 * stack, and the rest stays out: a Stripe error carries the object it was about, with secrets.
 */
function serializeError(err: unknown): unknown {
  const serialized = pino.stdSerializers.err(err as Error) as unknown;
  const cause = (err as { cause?: unknown } | null)?.cause;
  if (serialized === null || typeof serialized !== 'object' || cause === null || typeof cause !== 'object') {
    return serialized;
  }
  const fields: Record<string, string | number> = {};
  for (const name of CAUSE_FIELDS) {
    const value = (cause as Record<string, unknown>)[name];
    if (typeof value === 'string' || typeof value === 'number') fields[name] = value;
  }
  return Object.keys(fields).length > 0 ? Object.assign(serialized, { cause_fields: fields }) : serialized;
}
