import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

// Format: v1.<iv>.<tag>.<ciphertext>, each base64url. The version leaves room for key rotation.
const VERSION = 'v1';

const IV_BYTES = 12;
const IVS_PER_DRAW = 256;
let ivs = Buffer.alloc(0);
let nextIvAt = 0;

/**
 * A fresh random IV. One draw from the CSPRNG serves 256 of them (each 12-byte slice is handed
 * out once, and a new draw replaces the buffer when it runs out), as Node pools randomUUID:
 * a randomBytes call per seal was 3% of a hold's CPU, and every idempotent answer is sealed.
 */
function freshIv(): Buffer {
  if (nextIvAt + IV_BYTES > ivs.length) {
    ivs = randomBytes(IV_BYTES * IVS_PER_DRAW);
    nextIvAt = 0;
  }
  const iv = ivs.subarray(nextIvAt, nextIvAt + IV_BYTES);
  nextIvAt += IV_BYTES;
  return iv;
}

function keyOf(secretKey: string): Buffer {
  return createHash('sha256').update(secretKey).digest();
}

/**
 * Encrypts a secret the service must be able to read back (webhook signing secrets sign every
 * delivery, so they cannot be hashed like API keys). AES-256-GCM: a tampered value fails to open.
 */
export function sealSecret(secretKey: string, plaintext: string): string {
  const iv = freshIv();
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
