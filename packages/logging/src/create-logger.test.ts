import { Writable } from 'node:stream';
import { createLogger } from './create-logger';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('info', 'test', stream), lines };
}

describe('createLogger', () => {
  it('when an error with a diagnostic code is logged, then the code stays readable', () => {
    const { logger, lines } = capture();
    const error = Object.assign(new Error('incorrect header check'), { code: 'Z_DATA_ERROR' });
    logger.error({ err: error, detail: { code: 'P2028' } }, 'request failed');
    expect((lines[0]!.err as { code: string }).code).toBe('Z_DATA_ERROR');
    expect((lines[0]!.detail as { code: string }).code).toBe('P2028');
  });

  it('when an error has a cause, then what names the failure at its service is logged and nothing it was about', () => {
    const { logger, lines } = capture();
    const stripeError = Object.assign(new Error('An error occurred with our connection to Stripe.'), {
      type: 'StripeConnectionError',
      statusCode: 503,
      requestId: 'req_4ZgAq0Xp',
      payment_intent: { id: 'pi_1', client_secret: 'pi_1_secret_XYZ' },
    });
    logger.error({ err: new Error('service_unavailable', { cause: stripeError }) }, 'request failed');

    const err = lines[0]!.err as { cause_fields: unknown; message: string };
    expect(err.cause_fields).toEqual({ type: 'StripeConnectionError', statusCode: 503, requestId: 'req_4ZgAq0Xp' });
    expect(err.message).toContain('our connection to Stripe');
    expect(JSON.stringify(lines[0])).not.toContain('pi_1_secret_XYZ');
  });

  it('when a gift card code or a credential is logged by mistake, then it is redacted', () => {
    const { logger, lines } = capture();
    logger.info({
      body: { gift_card_code: 'GC-SECRET-1', new_gift_card_code: 'GC-SECRET-2', token: 't1.a.b' },
      gift_card: { id: 'card', code: 'GC-SECRET-3' },
      answer: { gift_card: { code: 'GC-SECRET-4' } },
      req: { headers: { authorization: 'Bearer svc_x.y' } },
    });
    const text = JSON.stringify(lines[0]);
    for (const secret of ['GC-SECRET-1', 'GC-SECRET-2', 'GC-SECRET-3', 'GC-SECRET-4', 't1.a.b', 'svc_x.y']) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('"id":"card"');
  });

  it('when an order, member or self-service token is logged by mistake, in a header or a body, then it is redacted', () => {
    const { logger, lines } = capture();
    logger.info({
      body: { membership_token: 't1.member', wallet_token: 'W-SECRET' },
      answer: { order_token: 't1.order', member_token: 't1.member2', manage_token: 't1.manage' },
      req: { headers: { 'x-order-token': 't1.order2', 'x-membership-token': 't1.manage2' } },
    });
    const text = JSON.stringify(lines[0]);
    for (const secret of ['t1.member', 'W-SECRET', 't1.order', 't1.member2', 't1.manage', 't1.order2', 't1.manage2']) {
      expect(text).not.toContain(secret);
    }
  });
});
