import { openSecret } from '@booking/signing';
import type { DeliveryToSend } from './read-delivery';

/**
 * The body receivers get: `{id, event, emitted_at, data}` (+ `_test` on test deliveries). The
 * event's data is what was recorded with the change, except a customer's contact fields, which
 * are read now so that receivers never act on an address the customer has since changed.
 */
export function buildEnvelope(delivery: DeliveryToSend): Record<string, unknown> {
  if (delivery.isTest || !delivery.event) {
    return {
      id: delivery.id,
      event: delivery.eventName,
      emitted_at: delivery.createdAt.toISOString(),
      data: delivery.testData ?? {},
      _test: true,
    };
  }
  const data = { ...(delivery.event.data as Record<string, unknown>) };
  const { customer } = delivery;
  if (customer) {
    Object.assign(data, {
      email: customer.email,
      first_name: customer.firstName,
      last_name: customer.lastName,
      phone: customer.phone,
    });
  }
  return { id: delivery.id, event: delivery.eventName, emitted_at: delivery.event.createdAt.toISOString(), data };
}

/**
 * The envelope with the event's sealed fields (bearer secrets such as a reissued gift card's
 * code) opened into its data, for sending only. Throws when they cannot be opened.
 */
export function withSecretFields(
  envelope: Record<string, unknown>,
  sealedData: string | null | undefined,
  secretKey: string,
): Record<string, unknown> {
  if (!sealedData) return envelope;
  const secrets = JSON.parse(openSecret(secretKey, sealedData)) as Record<string, string>;
  return { ...envelope, data: { ...(envelope.data as Record<string, unknown>), ...secrets } };
}
