import type { TSchema } from '@sinclair/typebox';

/** Placeholder until the typed event payloads land: the OpenAPI 3.1 `webhooks` section. */
export const webhooksOpenApi: { webhooks: Record<string, unknown>; schemas: TSchema[] } = { webhooks: {}, schemas: [] };
