import { generateApiKey, hashSecret, parseApiKey, secretMatches } from './api-keys';

describe('API keys', () => {
  it('when a key is generated, then parsing its token gives back its prefix and a secret matching its hash', () => {
    const key = generateApiKey();

    expect(key.token).toMatch(/^svc_[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/);
    const parsed = parseApiKey(key.token);
    expect(parsed).not.toBeNull();
    expect(parsed!.prefix).toBe(key.prefix);
    expect(key.token).toBe(`svc_${parsed!.prefix}.${parsed!.secret}`);
    expect(hashSecret(parsed!.secret)).toBe(key.secretHash);
    expect(secretMatches(parsed!.secret, key.secretHash)).toBe(true);
  });

  it('when two keys are generated, then their prefixes, secrets and hashes differ', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a.prefix).not.toBe(b.prefix);
    expect(a.token).not.toBe(b.token);
    expect(a.secretHash).not.toBe(b.secretHash);
  });

  it('when the stored hash does not store the secret, then secretMatches is false', () => {
    const key = generateApiKey();
    const other = generateApiKey();
    const { secret } = parseApiKey(key.token)!;

    expect(secretMatches(parseApiKey(other.token)!.secret, key.secretHash)).toBe(false);
    expect(secretMatches(`${secret}x`, key.secretHash)).toBe(false);
    expect(secretMatches('', key.secretHash)).toBe(false);
    // A truncated or malformed stored hash never matches (and never throws).
    expect(secretMatches(secret, key.secretHash.slice(0, 32))).toBe(false);
    expect(secretMatches(secret, 'not-hex')).toBe(false);
    expect(secretMatches(secret, '')).toBe(false);
  });

  it('when the hash is computed, then it is the lowercase hex SHA-256 of the secret', () => {
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it.each([
    '',
    'svc_',
    'svc_.',
    'svc_abcdef12',
    'svc_abcdef12.',
    'svc_abcdef12secretsecretsecretsecret',
    'svc_abc.secretsecretsecretsecretsecret', // prefix shorter than 8
    'svc_abcdef12.short', // secret shorter than 20
    'svc_abcd-ef12.secretsecretsecretsecretsecret', // prefix with a dash
    'svc_abcdef12.secret secretsecretsecretsecret', // space in the secret
    'svc_abcdef12.secretsecretsecretsecret.more',
    'sk_abcdef12.secretsecretsecretsecretsecret',
    'SVC_abcdef12.secretsecretsecretsecretsecret',
    'Bearer svc_abcdef12.secretsecretsecretsecretsecret',
    'svc_abcdef12.secretsecretsecretsecretsecret\n',
    ` svc_abcdef12.secretsecretsecretsecretsecret`,
    `svc_${'a'.repeat(33)}.secretsecretsecretsecretsecret`, // prefix longer than 32
    `svc_abcdef12.${'s'.repeat(129)}`, // secret longer than 128
  ])('when the text %p is not shaped like a key, then parseApiKey is null', (text) => {
    expect(parseApiKey(text)).toBeNull();
  });

  it('when the text is shaped like a key, then parseApiKey splits it even if the key does not exist', () => {
    expect(parseApiKey('svc_abcdef12.secretsecretsecretsecret_-')).toEqual({
      prefix: 'abcdef12',
      secret: 'secretsecretsecretsecret_-',
    });
  });
});
