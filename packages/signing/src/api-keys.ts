import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new key: `token` is shown to its owner once; only `prefix` and `secretHash` are stored. */
export interface GeneratedApiKey {
  token: string;
  prefix: string;
  secretHash: string;
}

export interface ParsedApiKey {
  prefix: string;
  secret: string;
}

const TOKEN_PATTERN = /^svc_([A-Za-z0-9]{8,32})\.([A-Za-z0-9_-]{20,128})$/;

/**
 * SHA-256 is enough here: the secret is 32 random bytes, so there is nothing for a slow,
 * salted password hash to protect against, and key checks stay cheap on every request.
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const given = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}

export function generateApiKey(): GeneratedApiKey {
  const prefix = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { token: `svc_${prefix}.${secret}`, prefix, secretHash: hashSecret(secret) };
}

/** Splits `svc_<prefix>.<secret>`; null when the text is not shaped like a key. */
export function parseApiKey(token: string): ParsedApiKey | null {
  const match = TOKEN_PATTERN.exec(token);
  return match ? { prefix: match[1]!, secret: match[2]! } : null;
}
