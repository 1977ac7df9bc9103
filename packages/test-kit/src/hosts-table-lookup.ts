import type { LookupAll } from '@booking/address-policy';

/** What every test app resolves unless told otherwise: the names /etc/hosts gives any machine. */
export const LOCAL_HOSTS: Record<string, string[]> = { localhost: ['127.0.0.1', '::1'] };

/**
 * A resolver that answers from `table` alone and never sends a DNS query, so no test depends on
 * (or leaks names to) a network resolver. Any other name fails as getaddrinfo's ENOTFOUND does.
 */
export function hostsTableLookup(table: Record<string, string[]> = LOCAL_HOSTS): LookupAll {
  return async (hostname) => {
    const addresses = table[hostname.toLowerCase()];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}
