import type { Config } from '@booking/config';
import Stripe from 'stripe';

/**
 * The Stripe SDK, or null when no key is configured (payment routes then answer 503
 * payments_not_configured). STRIPE_API_BASE points the real SDK at a compatible local server.
 */
export function createStripe(config: Config): Stripe | null {
  if (!config.stripe.secretKey) return null;
  const base = config.stripe.apiBase ? new URL(config.stripe.apiBase) : null;
  return new Stripe(config.stripe.secretKey, {
    maxNetworkRetries: 2,
    timeout: 10_000,
    ...(base && {
      host: base.hostname,
      port: Number(base.port) || (base.protocol === 'https:' ? 443 : 80),
      protocol: base.protocol.replace(':', '') as 'http' | 'https',
    }),
  });
}
