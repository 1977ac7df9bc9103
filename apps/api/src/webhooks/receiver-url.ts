import { isIP } from 'node:net';
import { AppError } from '@booking/domain';

const PRIVATE_NAMES = /^(localhost|.*\.localhost|.*\.local|.*\.internal)$/i;

/**
 * The first gate for a receiver address: HTTPS, no credentials, and not obviously internal.
 * Names are resolved and every address checked again on each delivery attempt (DNS may change),
 * so this only spares operators a subscription that could never work.
 */
export function assertReceiverUrl(raw: string, allowPrivate: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('invalid_webhook_url', 'not a URL');
  }
  if (url.username || url.password) throw new AppError('invalid_webhook_url', 'credentials in the URL are not allowed');
  if (allowPrivate) {
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new AppError('invalid_webhook_url', 'use https');
    return url.toString();
  }
  if (url.protocol !== 'https:') throw new AppError('invalid_webhook_url', 'receivers must use https');
  // A fully qualified name may end in a dot (`localhost.`): it names the same host.
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '');
  if (isIP(host) !== 0 || PRIVATE_NAMES.test(host)) {
    throw new AppError('invalid_webhook_url', 'use a public host name, not an IP address or an internal name');
  }
  return url.toString();
}
