import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which network addresses a webhook may be delivered to.
 *
 * Webhook URLs are chosen by tenants, so without this check a tenant could make the dispatcher
 * talk to our own infrastructure (Redis, PostgreSQL, cloud metadata at 169.254.169.254, ...).
 * The dispatcher applies it on every attempt; the API applies the same rules when a URL is
 * subscribed, so a name that already points inside is refused up front.
 */

/** A resolved address that passed the policy; the request connects to exactly these. */
export interface VettedAddress {
  address: string;
  family: 4 | 6;
}

export type AddressVerdict = { allowed: true } | { allowed: false; range: string };

/** A refusal whose message is safe to store as the attempt's error. */
export class AddressPolicyError extends Error {
  override name = 'AddressPolicyError';
}

/** Resolves a host name to every address it has (A and AAAA), as `dns.lookup` with `all: true` does. */
export type LookupAll = (hostname: string) => Promise<{ address: string; family: number }[]>;

const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');

/** The operating system's resolver (getaddrinfo: hosts file, then DNS). */
export const systemLookupAll: LookupAll = (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * Allows only what ipaddr.js calls plain `unicast`. An allowlist rather than a list of bad ranges,
 * so ranges we did not think of (NAT64, 6to4, Teredo, documentation, ...) fail closed, including
 * ones a future ipaddr.js version starts to recognise.
 */
export function classifyAddress(address: string): AddressVerdict {
  // net.isIP, not ipaddr.isValid: the latter also accepts shorthand such as '127.1'.
  if (isIP(address) === 0) return { allowed: false, range: 'invalid' };
  // process() turns ::ffff:a.b.c.d into a.b.c.d, so a mapped loopback is judged as loopback.
  const ip = ipaddr.process(address);
  const range = ip.range();
  if (range !== 'unicast') return { allowed: false, range };
  // Deprecated IPv4-compatible addresses (::a.b.c.d) are `unicast` to ipaddr.js, but some stacks
  // still map them onto IPv4, so ::127.0.0.1 could mean loopback.
  if (ip instanceof ipaddr.IPv6 && ip.match(IPV4_COMPATIBLE)) {
    return { allowed: false, range: 'ipv4Compatible' };
  }
  return { allowed: true };
}

/**
 * Resolves `hostname` (a name or a literal IP, without URL brackets) and checks every address.
 * Throws AddressPolicyError if the name does not resolve or if ANY address is refused: checking
 * only the first would let a name with one public and one private record pick the private one
 * at connect time. Called on every attempt, because DNS answers change.
 */
export async function resolveVettedAddresses(
  hostname: string,
  allowPrivateAddresses: boolean,
  lookupAll: LookupAll = systemLookupAll,
): Promise<VettedAddress[]> {
  let resolved: { address: string; family: number }[];
  if (isIP(hostname) !== 0) {
    resolved = [{ address: hostname, family: isIP(hostname) }];
  } else {
    try {
      resolved = await lookupAll(hostname);
    } catch (_error) {
      throw new AddressPolicyError('dns lookup failed');
    }
  }
  if (resolved.length === 0) throw new AddressPolicyError('dns lookup failed');
  return vetAddresses(resolved, allowPrivateAddresses);
}

/** Checks addresses a name resolved to; throws AddressPolicyError if ANY of them is refused. */
export function vetAddresses(
  resolved: { address: string; family: number }[],
  allowPrivateAddresses: boolean,
): VettedAddress[] {
  const vetted: VettedAddress[] = [];
  for (const { address, family } of resolved) {
    if (family !== 4 && family !== 6) throw new AddressPolicyError(`address not allowed: ${address} (invalid)`);
    if (!allowPrivateAddresses) {
      const verdict = classifyAddress(address);
      if (!verdict.allowed) throw new AddressPolicyError(`address not allowed: ${address} (${verdict.range})`);
    }
    vetted.push({ address, family });
  }
  return vetted;
}
