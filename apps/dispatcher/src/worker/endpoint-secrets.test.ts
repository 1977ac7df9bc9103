import * as signing from '@booking/signing';
import { EndpointSecrets } from './endpoint-secrets';

const KEY = 'a'.repeat(64);
const seal = (secret: string, key = KEY) => signing.sealSecret(key, secret);

describe('EndpointSecrets', () => {
  afterEach(() => jest.restoreAllMocks());

  it('opens each sealed secret once and answers from memory after that', () => {
    const opens = jest.spyOn(signing, 'openSecret');
    const secrets = new EndpointSecrets(KEY);
    const current = seal('whsec_current');
    const rotated = seal('whsec_rotated');

    expect(secrets.open(current)).toBe('whsec_current');
    expect(secrets.open(current)).toBe('whsec_current');
    expect(secrets.open(rotated)).toBe('whsec_rotated');
    expect(secrets.open(current)).toBe('whsec_current');
    expect(opens).toHaveBeenCalledTimes(2);
  });

  it('throws for a value its key cannot open, every time, and keeps nothing of it', () => {
    const secrets = new EndpointSecrets(KEY);
    const foreign = seal('whsec_other', 'b'.repeat(64));

    expect(() => secrets.open(foreign)).toThrow();
    expect(() => secrets.open(foreign)).toThrow();
    expect(secrets.size).toBe(0);
  });

  it('keeps at most maxOpen secrets, dropping the least recently used', () => {
    const opens = jest.spyOn(signing, 'openSecret');
    const secrets = new EndpointSecrets(KEY, { maxOpen: 2 });
    const [a, b, c] = ['whsec_a', 'whsec_b', 'whsec_c'].map((s) => seal(s));

    secrets.open(a!);
    secrets.open(b!);
    secrets.open(a!); // a is now the most recently used, so c pushes b out
    secrets.open(c!);
    expect(secrets.size).toBe(2);
    expect(opens).toHaveBeenCalledTimes(3);

    expect(secrets.open(a!)).toBe('whsec_a');
    expect(opens).toHaveBeenCalledTimes(3);
    expect(secrets.open(b!)).toBe('whsec_b');
    expect(opens).toHaveBeenCalledTimes(4);
  });
});
