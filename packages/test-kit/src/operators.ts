import { parseApiKey } from '@booking/signing';
import type { TestApp } from './app';

/** The Authorization header value for a tenant API key. */
export const bearer = (key: string) => `Bearer ${key}`;

/** The id of the api_keys row behind a key: what events carry as the acting user. */
export async function keyIdOf(t: TestApp, key: string): Promise<string> {
  return (await t.deps.db.apiKey.findUniqueOrThrow({ where: { prefix: parseApiKey(key)!.prefix } })).id;
}
