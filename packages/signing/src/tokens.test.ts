import { createHmac, randomUUID } from 'node:crypto';
import { signToken, TokenError, verifyToken, type TokenFailure, type TokenPurpose } from './tokens';

const SECRET = 'test-token-signing-secret-0123456789abcdef';

/** The reason verifyToken gives for refusing `token`; fails the test if it accepts it. */
function failureOf(token: string, options: { secret?: string; purpose?: TokenPurpose; now?: Date } = {}): TokenFailure {
  try {
    verifyToken(options.secret ?? SECRET, options.purpose ?? 'booking', token, options.now);
  } catch (error) {
    expect(error).toBeInstanceOf(TokenError);
    return (error as TokenError).reason;
  }
  throw new Error(`expected the token to be refused: ${token}`);
}

/** A token whose payload is `payloadText`, correctly signed, as only the secret's holder could make. */
function signedRaw(payloadText: string, purpose: TokenPurpose = 'booking'): string {
  const payload = Buffer.from(payloadText).toString('base64url');
  const mac = createHmac('sha256', SECRET).update(`t1.${purpose}.${payload}`).digest('base64url');
  return `t1.${payload}.${mac}`;
}

/** Replaces the character at `index` with a different one from the base64url alphabet. */
function flipChar(text: string, index: number): string {
  const replacement = text[index] === 'A' ? 'B' : 'A';
  return `${text.slice(0, index)}${replacement}${text.slice(index + 1)}`;
}

describe('signed tokens', () => {
  const bookingId = randomUUID();
  const tenantId = randomUUID();

  it('when a token is signed, then verifying it for the same purpose gives back its claims', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const token = signToken(SECRET, 'booking', { subject: bookingId, tenantId, ttlSeconds: 3600, now });

    expect(token).toMatch(/^t1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(verifyToken(SECRET, 'booking', token, new Date('2030-01-01T00:59:59Z'))).toEqual({
      subject: bookingId,
      tenantId,
      expiresAt: new Date('2030-01-01T01:00:00Z'),
    });
  });

  it('when verified without an explicit time, then the current time is used', () => {
    const token = signToken(SECRET, 'check_in', { subject: bookingId, tenantId, ttlSeconds: 60 });
    expect(verifyToken(SECRET, 'check_in', token).subject).toBe(bookingId);
  });

  it('when the payload is tampered with, then the token is invalid', () => {
    const token = signToken(SECRET, 'booking', { subject: bookingId, tenantId, ttlSeconds: 3600 });
    const [version, , signature] = token.split('.');
    const forgedClaims = { sub: randomUUID(), ten: tenantId, exp: Math.floor(Date.now() / 1000) + 3600 };
    const forged = `${version}.${Buffer.from(JSON.stringify(forgedClaims)).toString('base64url')}.${signature}`;

    expect(failureOf(forged)).toBe('invalid');
    const [, payload] = token.split('.');
    expect(failureOf(`${version}.${flipChar(payload!, 2)}.${signature}`)).toBe('invalid');
  });

  it('when the signature is tampered with, truncated or missing, then the token is invalid', () => {
    const token = signToken(SECRET, 'booking', { subject: bookingId, tenantId, ttlSeconds: 3600 });
    const [version, payload, signature] = token.split('.') as [string, string, string];

    expect(failureOf(`${version}.${payload}.${flipChar(signature, 0)}`)).toBe('invalid');
    expect(failureOf(`${version}.${payload}.${flipChar(signature, 20)}`)).toBe('invalid');
    expect(failureOf(`${version}.${payload}.${signature.slice(0, -4)}`)).toBe('invalid');
    expect(failureOf(`${version}.${payload}.`)).toBe('invalid');
  });

  it('when the token has expired, then it is expired (and a forged expiry is invalid, not expired)', () => {
    const issuedAt = new Date('2030-01-01T00:00:00Z');
    const token = signToken(SECRET, 'booking', { subject: bookingId, tenantId, ttlSeconds: 3600, now: issuedAt });

    expect(failureOf(token, { now: new Date('2030-01-01T01:00:00Z') })).toBe('expired');
    expect(failureOf(token, { now: new Date('2031-01-01T00:00:00Z') })).toBe('expired');
    const past = signToken(SECRET, 'booking', {
      subject: bookingId,
      tenantId,
      ttlSeconds: 60,
      now: new Date(Date.now() - 120_000),
    });
    expect(failureOf(past)).toBe('expired');
  });

  it("when a token made for 'check_in' is presented as a 'booking' token, then it is invalid", () => {
    const checkIn = signToken(SECRET, 'check_in', { subject: bookingId, tenantId, ttlSeconds: 3600 });

    expect(failureOf(checkIn, { purpose: 'booking' })).toBe('invalid');
    expect(failureOf(checkIn, { purpose: 'waiver' })).toBe('invalid');
    expect(verifyToken(SECRET, 'check_in', checkIn).subject).toBe(bookingId);
  });

  it('when the token was signed with another secret, then it is invalid', () => {
    const token = signToken('another-secret-0123456789abcdef0123456789', 'booking', {
      subject: bookingId,
      tenantId,
      ttlSeconds: 3600,
    });
    expect(failureOf(token)).toBe('invalid');
  });

  it.each([
    '',
    'garbage',
    't1',
    't1.',
    't1..',
    '...',
    't1.a.b',
    't1.a.b.c',
    't2.eyJzdWIiOiJ4In0.AAAA',
    'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl', // a JWT
    '\u0000.\u0000.\u0000',
    't1.💥.💥',
  ])('when the token is the garbage string %p, then it is invalid', (garbage) => {
    expect(failureOf(garbage)).toBe('invalid');
  });

  it.each([
    ['not JSON', 'not json'],
    ['claims missing the tenant', JSON.stringify({ sub: 'x', exp: 4102444800 })],
    ['a string expiry', JSON.stringify({ sub: 'x', ten: 'y', exp: '4102444800' })],
    ['a JSON array', '[]'],
    ['JSON null', 'null'],
    ['a JSON number', '42'],
  ])('when a correctly signed payload is %s, then the token is invalid', (_label, payloadText) => {
    expect(failureOf(signedRaw(payloadText))).toBe('invalid');
  });

  describe('signature encoding', () => {
    const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const token = signToken(SECRET, 'booking', { subject: bookingId, tenantId, ttlSeconds: 3600 });
    const [version, payload, signature] = token.split('.') as [string, string, string];
    const withSignature = (text: string) => `${version}.${payload}.${text}`;

    it('when the last character of the signature has its unused low bits changed, then the token is invalid although the bytes are the same', () => {
      // 32 bytes take 43 characters: the last one carries 4 bits of the MAC and 2 unused bits.
      const last = ALPHABET.indexOf(signature.at(-1)!);
      const mutated = `${signature.slice(0, -1)}${ALPHABET[last ^ 0b01]}`;
      expect(Buffer.from(mutated, 'base64url')).toEqual(Buffer.from(signature, 'base64url'));

      expect(failureOf(withSignature(mutated))).toBe('invalid');
      expect(verifyToken(SECRET, 'booking', withSignature(signature)).subject).toBe(bookingId);
    });

    it.each([
      ['padding', (s: string) => `${s}=`],
      ['a character outside the alphabet', (s: string) => `${s.slice(0, 10)}!${s.slice(10)}`],
      ['a space', (s: string) => `${s.slice(0, 10)} ${s.slice(10)}`],
    ])('when the signature is spelled with %s, then the token is invalid', (_label, respell) => {
      const respelled = respell(signature);
      expect(Buffer.from(respelled, 'base64url')).toEqual(Buffer.from(signature, 'base64url'));

      expect(failureOf(withSignature(respelled))).toBe('invalid');
    });
  });

  describe('subject and tenant forms', () => {
    const customerId = randomUUID();
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const claims = (sub: unknown, ten: unknown = tenantId) => JSON.stringify({ sub, ten, exp });

    it.each(['booking', 'check_in'] as const)(
      "when a correctly signed '%s' token names something other than a uuid, then it is invalid",
      (purpose) => {
        for (const subject of ['', 'x', '42', `${bookingId}:${customerId}`, `${bookingId} `, `{${bookingId}}`]) {
          expect(failureOf(signedRaw(claims(subject), purpose), { purpose })).toBe('invalid');
        }
        expect(verifyToken(SECRET, purpose, signedRaw(claims(bookingId), purpose)).subject).toBe(bookingId);
      },
    );

    it("when a correctly signed 'waiver' token's subject is not <bookingId>:<customerId> or, as links were issued before, a booking id alone, then it is invalid", () => {
      for (const subject of ['', 'x', `${bookingId}:`, `${bookingId}:x`, `x:${customerId}`, `{${bookingId}}`]) {
        expect(failureOf(signedRaw(claims(subject), 'waiver'), { purpose: 'waiver' })).toBe('invalid');
      }
      for (const subject of [bookingId, `${bookingId}:${customerId}`]) {
        expect(verifyToken(SECRET, 'waiver', signedRaw(claims(subject), 'waiver')).subject).toBe(subject);
      }
    });

    it("when a correctly signed 'manage' token's subject is not <bookingId>:<customerId>, then it is invalid", () => {
      for (const subject of [
        bookingId,
        `${bookingId}:`,
        `${bookingId}:x`,
        `x:${customerId}`,
        `${bookingId}:${customerId}:x`,
      ]) {
        expect(failureOf(signedRaw(claims(subject), 'manage'), { purpose: 'manage' })).toBe('invalid');
      }
      const subject = `${bookingId}:${customerId}`;
      expect(verifyToken(SECRET, 'manage', signedRaw(claims(subject), 'manage')).subject).toBe(subject);
    });

    it('when a correctly signed token names a tenant that is not a uuid, then it is invalid', () => {
      for (const tenant of ['', 'demo', `${tenantId}x`]) {
        expect(failureOf(signedRaw(claims(bookingId, tenant)))).toBe('invalid');
      }
    });

    it('when a token of an unexpected form has also expired, then it is expired: the signature is genuine and its time is over', () => {
      const expired = JSON.stringify({ sub: 'x', ten: tenantId, exp: Math.floor(Date.now() / 1000) - 60 });
      expect(failureOf(signedRaw(expired))).toBe('expired');
    });
  });
});
