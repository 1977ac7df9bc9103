import { createHash, randomBytes, randomInt } from 'node:crypto';

export type WalletTokenKind = 'card' | 'qr';

// The gift card alphabet: no 0/O or 1/I, since card numbers are read aloud and typed.
const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/**
 * A new wallet token secret. A card carries `W` and 20 characters in groups of four (100 bits:
 * typed at the till when the card will not scan); a QR code carries 32 random bytes.
 */
export function generateWalletToken(kind: WalletTokenKind): string {
  if (kind === 'qr') return `wq_${randomBytes(32).toString('base64url')}`;
  const chars = Array.from({ length: 20 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
  return `W${chars.match(/.{4}/g)!.join('-')}`;
}

/** Card numbers are typed with or without dashes and spaces, in any case; QR secrets are exact. */
export function normalizeWalletToken(secret: string): string {
  const trimmed = secret.trim();
  return trimmed.startsWith('wq_') ? trimmed : trimmed.replace(/[\s-]/g, '').toUpperCase();
}

/** What is stored: the SHA-256 of the normalised secret (the secret itself is shown once). */
export function hashWalletToken(secret: string): string {
  return createHash('sha256').update(normalizeWalletToken(secret)).digest('hex');
}

/** The last four characters, printed on receipts and in events to tell cards apart. */
export function walletTokenLast4(secret: string): string {
  return normalizeWalletToken(secret).slice(-4);
}
