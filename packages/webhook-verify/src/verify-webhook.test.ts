import { createHmac, randomUUID } from 'node:crypto';
import {
  DEFAULT_TOLERANCE_MS,
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookOptions,
  type WebhookHeaders,
  type WebhookVerificationFailure,
} from './index';

const CURRENT = 'whsec_current_secret';
const PREVIOUS = 'whsec_previous_secret';
const NOW = 1_763_750_000_000;

function makeDelivery(overrides: { body?: string; timestamp?: string; secret?: string } = {}) {
  const id = randomUUID();
  const body =
    overrides.body ??
    JSON.stringify({
      id,
      event: 'booking.confirmed',
      emitted_at: new Date(NOW).toISOString(),
      data: { event_id: randomUUID(), schema_version: 2, entity_type: 'booking', entity_id: randomUUID() },
    });
  const timestamp = overrides.timestamp ?? String(NOW);
  const headers: WebhookHeaders = {
    'X-Service-Delivery-Id': id,
    'X-Service-Event': 'booking.confirmed',
    'X-Service-Timestamp': timestamp,
    'X-Service-Signature': signWebhook(overrides.secret ?? CURRENT, timestamp, body),
  };
  return { id, body, timestamp, headers };
}

function verify(options: Partial<VerifyWebhookOptions> & Pick<VerifyWebhookOptions, 'rawBody' | 'headers'>) {
  return verifyWebhook({ secrets: CURRENT, now: () => NOW, ...options });
}

function failure(fn: () => unknown): WebhookVerificationFailure {
  try {
    fn();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
  throw new Error('expected a WebhookVerificationError, but verification passed');
}

describe('signWebhook', () => {
  it('is v1, + lowercase hex HMAC-SHA256 over "<timestamp>.<rawBody>"', () => {
    const body = '{"id":"x","note":"café"}';
    const expected = createHmac('sha256', CURRENT).update(`${NOW}.${body}`, 'utf8').digest('hex');
    expect(signWebhook(CURRENT, NOW, body)).toBe(`v1,${expected}`);
    expect(signWebhook(CURRENT, String(NOW), Buffer.from(body, 'utf8'))).toBe(`v1,${expected}`);
    expect(signWebhook(CURRENT, NOW, body)).toMatch(/^v1,[0-9a-f]{64}$/);
  });

  it('rejects a timestamp that is not a non-negative integer', () => {
    expect(() => signWebhook(CURRENT, 1.5, '{}')).toThrow(TypeError);
    expect(() => signWebhook(CURRENT, -1, '{}')).toThrow(TypeError);
    expect(() => signWebhook(CURRENT, '12a', '{}')).toThrow(TypeError);
    expect(() => signWebhook('', NOW, '{}')).toThrow(TypeError);
  });
});

describe('verifyWebhook', () => {
  it('accepts a valid delivery and returns the typed envelope', () => {
    const { id, body, headers } = makeDelivery();
    const envelope = verify({ rawBody: body, headers });
    expect(envelope.id).toBe(id);
    expect(envelope.event).toBe('booking.confirmed');
    expect(envelope.emitted_at).toBe(new Date(NOW).toISOString());
    expect(envelope.data).toMatchObject({ schema_version: 2, entity_type: 'booking' });
    expect(envelope._test).toBeUndefined();
  });

  it('accepts the raw body as a Buffer, including non-ASCII UTF-8', () => {
    const id = randomUUID();
    const body = JSON.stringify({
      id,
      event: 'booking.created',
      emitted_at: '2025-11-21T10:00:00.000Z',
      data: { customer_email: 'zoë.ångström@example.com', note: 'Zoë Ångström 🎢' },
      _test: true,
    });
    const headers = {
      'x-service-delivery-id': id,
      'x-service-event': 'booking.created',
      'x-service-timestamp': String(NOW),
      'x-service-signature': signWebhook(CURRENT, NOW, body),
    };
    const envelope = verify({ rawBody: Buffer.from(body, 'utf8'), headers });
    expect(envelope.data).toMatchObject({ note: 'Zoë Ångström 🎢' });
    expect(envelope._test).toBe(true);
  });

  it('narrows data by event name: a receiver switching on event reads that event’s fields', () => {
    const bookingId = randomUUID();
    const data = { event_id: randomUUID(), schema_version: 2, entity_type: 'booking', entity_id: bookingId };
    const { body, headers } = makeDelivery({
      body: JSON.stringify({
        id: randomUUID(),
        event: 'booking.confirmed',
        emitted_at: new Date(NOW).toISOString(),
        data: { ...data, booking_id: bookingId, net_paid_cents: 4500, currency: 'EUR' },
      }),
    });
    headers['X-Service-Delivery-Id'] = (JSON.parse(body) as { id: string }).id;
    const envelope = verify({ rawBody: body, headers });
    const described = (() => {
      if (envelope._test) return 'test';
      switch (envelope.event) {
        case 'booking.confirmed':
          return `${envelope.data.booking_id} paid ${envelope.data.net_paid_cents} ${envelope.data.currency}`;
        default:
          return envelope.event;
      }
    })();
    expect(described).toBe(`${bookingId} paid 4500 EUR`);
  });

  it('looks headers up case-insensitively and accepts single-element arrays', () => {
    const { body, headers } = makeDelivery();
    const mixed: WebhookHeaders = {};
    for (const [name, value] of Object.entries(headers)) mixed[name.toUpperCase()] = [value as string];
    expect(verify({ rawBody: body, headers: mixed }).id).toBe(headers['X-Service-Delivery-Id']);
  });

  describe('secret rotation', () => {
    it('accepts X-Service-Signature-Previous when only the previous secret is configured', () => {
      const { body, timestamp, headers } = makeDelivery({ secret: CURRENT });
      headers['X-Service-Signature-Previous'] = signWebhook(PREVIOUS, timestamp, body);
      expect(verify({ rawBody: body, headers, secrets: PREVIOUS }).id).toBe(headers['X-Service-Delivery-Id']);
    });

    it('accepts X-Service-Signature with the current secret when both headers are present', () => {
      const { body, timestamp, headers } = makeDelivery({ secret: CURRENT });
      headers['X-Service-Signature-Previous'] = signWebhook(PREVIOUS, timestamp, body);
      expect(() => verify({ rawBody: body, headers, secrets: CURRENT })).not.toThrow();
    });

    it('accepts a delivery signed with either secret in `secrets`', () => {
      for (const secret of [CURRENT, PREVIOUS]) {
        const { body, headers } = makeDelivery({ secret });
        expect(() => verify({ rawBody: body, headers, secrets: [CURRENT, PREVIOUS] })).not.toThrow();
        expect(() => verify({ rawBody: body, headers, secrets: [PREVIOUS, CURRENT] })).not.toThrow();
      }
    });

    it('rejects when neither header matches any secret', () => {
      const { body, timestamp, headers } = makeDelivery({ secret: 'whsec_other' });
      headers['X-Service-Signature-Previous'] = signWebhook('whsec_other_previous', timestamp, body);
      expect(failure(() => verify({ rawBody: body, headers, secrets: [CURRENT, PREVIOUS] }))).toBe(
        'signature_mismatch',
      );
    });

    it('rejects a malformed previous-signature header even if the current one is valid', () => {
      const { body, headers } = makeDelivery();
      headers['X-Service-Signature-Previous'] = 'v1,abc';
      expect(failure(() => verify({ rawBody: body, headers }))).toBe('invalid_signature_format');
    });
  });

  describe('signature', () => {
    it('rejects a tampered body', () => {
      const { body, headers } = makeDelivery();
      const tampered = body.replace('booking.confirmed', 'booking.cancelled');
      expect(failure(() => verify({ rawBody: tampered, headers }))).toBe('signature_mismatch');
      expect(failure(() => verify({ rawBody: `${body} `, headers }))).toBe('signature_mismatch');
    });

    it('rejects a signature made with the wrong secret', () => {
      const { body, headers } = makeDelivery({ secret: 'whsec_wrong' });
      expect(failure(() => verify({ rawBody: body, headers }))).toBe('signature_mismatch');
    });

    it('rejects a signature over a different timestamp', () => {
      const { body, headers } = makeDelivery();
      headers['X-Service-Timestamp'] = String(NOW + 1);
      expect(failure(() => verify({ rawBody: body, headers }))).toBe('signature_mismatch');
    });

    it.each([
      ['uppercase hex', (sig: string) => `v1,${sig.slice(3).toUpperCase()}`],
      ['v2, prefix', (sig: string) => `v2,${sig.slice(3)}`],
      ['no prefix', (sig: string) => sig.slice(3)],
      ['63 hex characters', (sig: string) => sig.slice(0, -1)],
      ['65 hex characters', (sig: string) => `${sig}0`],
      ['non-hex character', (sig: string) => `${sig.slice(0, -1)}g`],
      ['surrounding whitespace', (sig: string) => ` ${sig}`],
      ['two signatures', (sig: string) => `${sig},${sig}`],
    ])('rejects %s as invalid_signature_format', (_label, mutate) => {
      const { body, headers } = makeDelivery();
      headers['X-Service-Signature'] = mutate(headers['X-Service-Signature'] as string);
      expect(failure(() => verify({ rawBody: body, headers }))).toBe('invalid_signature_format');
    });

    it('does not throw a RangeError on signatures of any length (constant-time path)', () => {
      const { body, headers } = makeDelivery();
      for (const value of ['v1,', 'v1,00', `v1,${'0'.repeat(63)}`, `v1,${'0'.repeat(64)}`, `v1,${'0'.repeat(200)}`]) {
        headers['X-Service-Signature'] = value;
        const reason = failure(() => verify({ rawBody: body, headers }));
        expect(['invalid_signature_format', 'signature_mismatch']).toContain(reason);
      }
    });
  });

  describe('timestamp', () => {
    it.each(['12a', '1.5e12', '-1763750000000', '+1763750000000', '1763750000000.0', ' 1763750000000', '0x1A'])(
      'rejects %p as invalid_timestamp',
      (timestamp) => {
        const { body, headers } = makeDelivery({ timestamp: String(NOW) });
        headers['X-Service-Timestamp'] = timestamp;
        expect(failure(() => verify({ rawBody: body, headers }))).toBe('invalid_timestamp');
      },
    );

    it('rejects a negative timestamp as invalid_timestamp even when signed over it', () => {
      const body = '{}';
      const headers: WebhookHeaders = {
        'x-service-delivery-id': 'd',
        'x-service-event': 'e',
        'x-service-timestamp': '-5',
        'x-service-signature': `v1,${createHmac('sha256', CURRENT).update(`-5.${body}`).digest('hex')}`,
      };
      expect(failure(() => verify({ rawBody: body, headers }))).toBe('invalid_timestamp');
    });

    it.each([
      ['5 min + 1 ms in the past', NOW - DEFAULT_TOLERANCE_MS - 1],
      ['5 min + 1 ms in the future', NOW + DEFAULT_TOLERANCE_MS + 1],
      ['in whole seconds (earlier delivery profile)', Math.floor(NOW / 1000)],
    ])('rejects a timestamp %s as timestamp_out_of_tolerance', (_label, timestampMs) => {
      const { body, headers } = makeDelivery({ timestamp: String(timestampMs) });
      expect(failure(() => verify({ rawBody: body, headers }))).toBe('timestamp_out_of_tolerance');
    });

    it.each([
      ['exactly 5 min in the past', NOW - DEFAULT_TOLERANCE_MS],
      ['exactly 5 min in the future', NOW + DEFAULT_TOLERANCE_MS],
    ])('accepts a timestamp %s', (_label, timestampMs) => {
      const { body, headers } = makeDelivery({ timestamp: String(timestampMs) });
      expect(() => verify({ rawBody: body, headers })).not.toThrow();
    });

    it('honours a custom toleranceMs', () => {
      const { body, headers } = makeDelivery({ timestamp: String(NOW - 1001) });
      expect(failure(() => verify({ rawBody: body, headers, toleranceMs: 1000 }))).toBe('timestamp_out_of_tolerance');
      expect(() => verify({ rawBody: body, headers, toleranceMs: 1001 })).not.toThrow();
    });

    it('uses Date.now when no clock is given', () => {
      const timestamp = String(Date.now());
      const { body, headers } = makeDelivery({ timestamp });
      expect(() => verifyWebhook({ rawBody: body, headers, secrets: CURRENT })).not.toThrow();
    });
  });

  describe('headers', () => {
    it.each(['X-Service-Delivery-Id', 'X-Service-Event', 'X-Service-Timestamp', 'X-Service-Signature'])(
      'rejects a delivery without %s as missing_header',
      (name) => {
        const { body, headers } = makeDelivery();
        delete headers[name];
        expect(failure(() => verify({ rawBody: body, headers }))).toBe('missing_header');
        expect(failure(() => verify({ rawBody: body, headers: { ...headers, [name]: '' } }))).toBe('missing_header');
        expect(failure(() => verify({ rawBody: body, headers: { ...headers, [name]: [] } }))).toBe('missing_header');
      },
    );

    it('rejects a delivery without any headers as missing_header', () => {
      expect(failure(() => verify({ rawBody: '{}', headers: {} }))).toBe('missing_header');
    });

    it('rejects a delivery id header that differs from the body id', () => {
      const { body, headers } = makeDelivery();
      headers['X-Service-Delivery-Id'] = randomUUID();
      expect(failure(() => verify({ rawBody: body, headers }))).toBe('delivery_id_mismatch');
    });

    it('rejects an event header that differs from the body event', () => {
      const { body, headers } = makeDelivery();
      headers['X-Service-Event'] = 'booking.cancelled';
      expect(failure(() => verify({ rawBody: body, headers }))).toBe('event_mismatch');
    });
  });

  describe('body', () => {
    it.each([
      ['not JSON', 'not json'],
      ['a JSON array', '[]'],
      ['JSON null', 'null'],
      ['without an id', JSON.stringify({ event: 'booking.created', emitted_at: 'x', data: {} })],
      ['with a numeric id', JSON.stringify({ id: 1, event: 'booking.created', emitted_at: 'x', data: {} })],
      ['without data', JSON.stringify({ id: 'd', event: 'booking.created', emitted_at: 'x' })],
      ['with a non-boolean _test', JSON.stringify({ id: 'd', event: 'e', emitted_at: 'x', data: {}, _test: 'yes' })],
    ])('rejects a correctly signed body that is %s as invalid_body', (_label, body) => {
      const { headers } = makeDelivery({ body });
      expect(failure(() => verify({ rawBody: body, headers }))).toBe('invalid_body');
    });
  });

  describe('options', () => {
    it('throws TypeError (not a verification error) for missing secrets or a bad tolerance', () => {
      const { body, headers } = makeDelivery();
      expect(() => verify({ rawBody: body, headers, secrets: [] })).toThrow(TypeError);
      expect(() => verify({ rawBody: body, headers, secrets: '' })).toThrow(TypeError);
      expect(() => verify({ rawBody: body, headers, secrets: [CURRENT, ''] })).toThrow(TypeError);
      expect(() => verify({ rawBody: body, headers, toleranceMs: -1 })).toThrow(TypeError);
      expect(() => verify({ rawBody: body, headers, toleranceMs: Number.NaN })).toThrow(TypeError);
    });

    it('WebhookVerificationError carries the reason and a name', () => {
      const error = new WebhookVerificationError('signature_mismatch');
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe('WebhookVerificationError');
      expect(error.reason).toBe('signature_mismatch');
    });
  });
});
