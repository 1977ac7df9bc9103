import { createHmac } from 'node:crypto';
import { openSecret, sealSecret } from './secret-box';
import { signWebhookPayload } from './webhook-signature';

describe('sealSecret / openSecret', () => {
  const key = 'a-test-key-of-at-least-thirty-two-characters';

  it('when sealed and opened with the same key, then the secret comes back and was not stored in clear', () => {
    const sealed = sealSecret(key, 'whsec_abc');
    expect(sealed).not.toContain('whsec_abc');
    expect(openSecret(key, sealed)).toBe('whsec_abc');
    expect(sealSecret(key, 'whsec_abc')).not.toBe(sealed);
  });

  it('when many secrets are sealed, across several draws of random IVs, then no IV is used twice', () => {
    // GCM with a repeated IV under one key leaks plaintexts: 2,000 seals span 8 draws of 256.
    const ivs = new Set(Array.from({ length: 2_000 }, () => sealSecret(key, 'x').split('.')[1]));
    expect(ivs.size).toBe(2_000);
    for (const iv of ivs) expect(Buffer.from(iv!, 'base64url')).toHaveLength(12);
  });

  it('when the key is wrong or the value tampered with, then opening fails', () => {
    const sealed = sealSecret(key, 'whsec_abc');
    expect(() => openSecret(`${key}x`, sealed)).toThrow();
    const parts = sealed.split('.');
    parts[3] = Buffer.from('whsec_abd').toString('base64url');
    expect(() => openSecret(key, parts.join('.'))).toThrow();
    expect(() => openSecret(key, 'garbage')).toThrow('not a sealed secret');
  });
});

describe('signWebhookPayload', () => {
  it('when signing, then it is v1, and the lowercase hex HMAC-SHA256 of timestamp.body', () => {
    const signature = signWebhookPayload('secret', 1700000000000, '{"id":"x"}');
    const expected = createHmac('sha256', 'secret').update('1700000000000.{"id":"x"}').digest('hex');
    expect(signature).toBe(`v1,${expected}`);
    expect(signature).toBe(signWebhookPayload('secret', 1700000000000, '{"id":"x"}'));
    expect(signature).not.toBe(signWebhookPayload('secret', 1700000000001, '{"id":"x"}'));
  });
});
