import { createHash, randomInt } from 'node:crypto';

// No 0/O or 1/I: codes are read aloud and typed from paper.
const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** A 16-character code shown as `XXXX-XXXX-XXXX-XXXX` (80 bits of randomness). */
export function generateGiftCardCode(): string {
  const chars = Array.from({ length: 16 }, () => ALPHABET[randomInt(ALPHABET.length)]);
  return [0, 4, 8, 12].map((i) => chars.slice(i, i + 4).join('')).join('-');
}

/** Customers type codes with or without dashes, spaces, in any case. */
export function normalizeGiftCardCode(code: string): string {
  return code.replace(/[\s-]/g, '').toUpperCase();
}

export function hashGiftCardCode(code: string): string {
  return createHash('sha256').update(normalizeGiftCardCode(code)).digest('hex');
}
