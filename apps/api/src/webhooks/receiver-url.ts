import { isIP } from 'node:net';
import { AddressPolicyError, vetAddresses, type LookupAll } from '@booking/address-policy';
import { AppError } from '@booking/domain';
import { isReservedHostName } from './reserved-host-names';

/** How long a subscription waits for DNS before leaving the name to the delivery-time check. */
export const RECEIVER_LOOKUP_TIMEOUT_MS = 2_000;

/**
 * Receivers listen on 443 or an unprivileged port (8443, 9443, ...). Ports below 1024 belong to
 * well-known services (SSH, SMTP, DNS, LDAP, SMB, ...): a webhook aimed at one is a request to
 * someone else's service from our address, never a receiver. Internal services on high ports
 * (Redis, PostgreSQL) are kept out by the address policy, not by the port.
 */
const MIN_UNPRIVILEGED_PORT = 1024;

/**
 * The gate for a receiver address at subscription: HTTPS, no credentials, a public-looking host
 * name (no IP literal, no single label, no reserved suffix), an allowed port, and, when the name
 * resolves now, only addresses the dispatcher's address policy allows. The dispatcher resolves
 * and checks the addresses again on every attempt (DNS answers change); this spares operators a
 * subscription that points inside from the start. Returns the URL in its normalised form.
 */
export async function assertReceiverUrl(
  raw: string,
  options: { allowPrivate: boolean; lookupAll: LookupAll },
): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('invalid_webhook_url', 'not a URL');
  }
  if (url.username || url.password) throw new AppError('invalid_webhook_url', 'credentials in the URL are not allowed');
  if (options.allowPrivate) {
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new AppError('invalid_webhook_url', 'use https');
    return url.toString();
  }
  if (url.protocol !== 'https:') throw new AppError('invalid_webhook_url', 'receivers must use https');
  // A fully qualified name may end in a dot (`localhost.`): it names the same host.
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '');
  if (isIP(host) !== 0) throw new AppError('invalid_webhook_url', 'use a public host name, not an IP address');
  // A single label is completed with the resolver's search domains: an intranet host.
  if (!host.includes('.') || isReservedHostName(host)) {
    throw new AppError('invalid_webhook_url', 'use a public host name, not a single label or an internal name');
  }
  // url.port is empty for the scheme's default, 443.
  if (url.port !== '' && Number(url.port) < MIN_UNPRIVILEGED_PORT) {
    throw new AppError('invalid_webhook_url', `use port 443 or a port from ${MIN_UNPRIVILEGED_PORT} up`);
  }
  await assertResolvesPublic(host, options.lookupAll);
  return url.toString();
}

/**
 * Refuses a name that resolves, now, to any address the delivery-time policy refuses. A name
 * that does not resolve in time (not yet published, or DNS slow) is left to that check, which
 * runs before every attempt anyway; the answer never names the address, which would map a
 * private network for whoever asks.
 */
async function assertResolvesPublic(host: string, lookupAll: LookupAll): Promise<void> {
  let resolved: { address: string; family: number }[];
  let timer: NodeJS.Timeout | undefined;
  try {
    resolved = await Promise.race([
      lookupAll(host),
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error('lookup timed out')), RECEIVER_LOOKUP_TIMEOUT_MS);
      }),
    ]);
  } catch {
    return;
  } finally {
    clearTimeout(timer);
  }
  try {
    vetAddresses(resolved, false);
  } catch (error) {
    if (!(error instanceof AddressPolicyError)) throw error;
    throw new AppError(
      'invalid_webhook_url',
      'the host name resolves to a private, loopback or other non-public address',
    );
  }
}
