export const WEBHOOK_EVENTS_TAG = {
  name: 'Webhook events',
  description:
    'What the service sends to the endpoints a tenant subscribed (see Webhook endpoints): a signed POST per event, retried on a schedule until the receiver answers 2xx.',
};

/**
 * The outbound webhooks, as tagged operations: each is ours to describe, so it gets the tag,
 * an operationId from its event name, and no security requirement of the receiver (the request
 * is authenticated by its signature headers), unless its fragment says otherwise.
 */
export function webhookItems(webhooks: Record<string, unknown>) {
  return Object.fromEntries(
    Object.entries(webhooks).map(([event, item]) => [
      event,
      Object.fromEntries(
        Object.entries(item as Record<string, object>).map(([method, operation]) => [
          method,
          {
            operationId: `${event.replace(/[._-](\w)/g, (_match, letter: string) => letter.toUpperCase())}Event`,
            tags: [WEBHOOK_EVENTS_TAG.name],
            security: [],
            ...operation,
          },
        ]),
      ),
    ]),
  );
}
