import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

// Format: v1.<iv>.<tag>.<ciphertext>, each base64url. The version leaves room for key rotation.
const VERSION = 'v1';

function keyOf(secretKey: string): Buffer {
  return createHash('sha256').update(secretKey).digest();
}

/**
 * Encrypts a secret the service must be able to read back (webhook signing secrets sign every
 * delivery, so they cannot be hashed like API keys). AES-256-GCM: a tampered value fails to open.
 */
export function sealSecret(secretKey: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secretKey), iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

export function openSecret(secretKey: string, sealed: string): string {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  if (version !== VERSION || !iv || !tag || ciphertext === undefined) throw new Error('not a sealed secret');
  const decipher = createDecipheriv('aes-256-gcm', keyOf(secretKey), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}
