import { openSecret } from '@booking/signing';
import { LRUCache } from 'lru-cache';

/** Secrets kept open at most; past that the least recently used is dropped. */
const MAX_OPEN = 1_000;

/**
 * Endpoints' signing secrets, each opened once rather than on every attempt (an AES-GCM open and
 * a key hash per delivery). Kept by their sealed text, so a rotation's new value is a new entry;
 * a replaced, expired or deleted endpoint's secret stays in this process's memory (never written
 * anywhere) until newer ones push it out or the process restarts. One per dispatcher, with its
 * WEBHOOK_SECRET_KEY: a value that key cannot open throws, as openSecret does, and is not kept.
 */
export class EndpointSecrets {
  private readonly opened: LRUCache<string, string>;

  /** `maxOpen` is lowered only by tests, to reach the bound with a few secrets. */
  constructor(
    private readonly secretKey: string,
    options: { maxOpen?: number } = {},
  ) {
    this.opened = new LRUCache({ max: options.maxOpen ?? MAX_OPEN });
  }

  /** Secrets held open now. */
  get size(): number {
    return this.opened.size;
  }

  open(sealed: string): string {
    let secret = this.opened.get(sealed);
    if (secret === undefined) {
      secret = openSecret(this.secretKey, sealed);
      this.opened.set(sealed, secret);
    }
    return secret;
  }
}
