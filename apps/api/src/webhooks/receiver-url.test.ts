import type { LookupAll } from '@booking/address-policy';
import { AppError } from '@booking/domain';
import { assertReceiverUrl, RECEIVER_LOOKUP_TIMEOUT_MS } from './receiver-url';

// Subscription-time checks only. Every lookup here is a table in memory: no DNS query is sent.

const PUBLIC_V4 = '93.184.216.34';
const PUBLIC_V6 = '2606:2800:220:1:248:1893:25c8:1946';

const table: Record<string, { address: string; family: number }[]> = {
  'hooks.example.com': [
    { address: PUBLIC_V4, family: 4 },
    { address: PUBLIC_V6, family: 6 },
  ],
  'loopback.example.com': [{ address: '127.0.0.1', family: 4 }],
  'mapped-loopback.example.com': [{ address: '::ffff:127.0.0.1', family: 6 }],
  'metadata.example.com': [{ address: '169.254.169.254', family: 4 }],
  'mixed.example.com': [
    { address: PUBLIC_V4, family: 4 },
    { address: '10.0.0.5', family: 4 },
  ],
  'v6-private.example.com': [{ address: 'fd12:3456:789a::1', family: 6 }],
};
const lookupAll: LookupAll = async (hostname) => {
  const found = table[hostname];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found;
};
const check = (url: string, lookup: LookupAll = lookupAll) =>
  assertReceiverUrl(url, { allowPrivate: false, lookupAll: lookup });

/** The AppError `url` is refused with; fails the test if it is accepted. */
async function refusalOf(url: string, lookup?: LookupAll): Promise<AppError> {
  const error = await check(url, lookup).then(
    (accepted) => new Error(`expected ${url} to be refused, it was accepted as ${accepted}`),
    (refused: unknown) => refused,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe('invalid_webhook_url');
  return error as AppError;
}

describe('assertReceiverUrl at subscription', () => {
  it.each([
    ['a public name on the default port', 'https://hooks.example.com/booking'],
    ['port 443 spelled out', 'https://hooks.example.com:443/booking'],
    ['port 1024', 'https://hooks.example.com:1024/'],
    ['port 8443', 'https://hooks.example.com:8443/'],
    ['port 65535', 'https://hooks.example.com:65535/'],
    ['a trailing dot', 'https://hooks.example.com./booking'],
    ['a name that only starts like a reserved one', 'https://localhost.example.com/'],
    ['a label that equals a reserved suffix but is not the last', 'https://internal.example.com/'],
    ['a name that merely ends in the same letters', 'https://mylocal.com/'],
  ])('accepts %s', async (_case, url) => {
    await expect(check(url)).resolves.toBe(new URL(url).toString());
  });

  it.each([['intranet'], ['intranet.'], ['wiki']])('refuses the single-label host name %s', async (host) => {
    const error = await refusalOf(`https://${host}/hook`);
    expect(error.detail).toMatch(/single label/);
  });

  it.each([
    'localhost',
    'api.localhost',
    'printer.local',
    'billing.internal',
    'billing.internal.',
    'receiver.test',
    'receiver.invalid',
    'receiver.example',
    'nas.home.arpa',
    '1.0.0.127.in-addr.arpa',
    'ipv4only.arpa',
    'hidden.onion',
    'erp.corp',
    'router.home',
    'smtp.mail',
    'nas.lan',
    'portal.intranet',
    'API.INTERNAL',
  ])('refuses the reserved name %s', async (host) => {
    await refusalOf(`https://${host}/hook`);
  });

  it.each(['22', '25', '80', '444', '1023'])('refuses port %s', async (port) => {
    const error = await refusalOf(`https://hooks.example.com:${port}/hook`);
    expect(error.detail).toMatch(/port 443 or a port from 1024 up/);
  });

  it.each([
    ['loopback', 'loopback.example.com'],
    ['IPv4-mapped loopback', 'mapped-loopback.example.com'],
    ['the cloud metadata address', 'metadata.example.com'],
    ['one private address among public ones', 'mixed.example.com'],
    ['an IPv6 unique-local address', 'v6-private.example.com'],
  ])('refuses a name that resolves to %s, without naming the address', async (_case, host) => {
    const error = await refusalOf(`https://${host}/hook`);
    expect(error.detail).toMatch(/resolves to a private, loopback or other non-public address/);
    for (const { address } of table[host]!) expect(String(error.detail)).not.toContain(address);
  });

  it('refuses IP literals, public ones included, before any lookup', async () => {
    const lookup = jest.fn(lookupAll);
    for (const url of ['https://127.0.0.1/', 'https://0x7f000001/', 'https://[::1]/', `https://${PUBLIC_V4}/`]) {
      await refusalOf(url, lookup);
    }
    expect(lookup).not.toHaveBeenCalled();
  });

  it('accepts a name that does not resolve yet: the delivery-time check decides', async () => {
    await expect(check('https://not-yet-published.example.org/hook')).resolves.toBe(
      'https://not-yet-published.example.org/hook',
    );
  });

  it('accepts a name whose lookup does not answer in time, without waiting for it', async () => {
    jest.useFakeTimers();
    try {
      const never: LookupAll = () => new Promise(() => undefined);
      const result = check('https://slow-dns.example.org/hook', never);

      await jest.advanceTimersByTimeAsync(RECEIVER_LOOKUP_TIMEOUT_MS);

      await expect(result).resolves.toBe('https://slow-dns.example.org/hook');
    } finally {
      jest.useRealTimers();
    }
  });

  it('with private URLs allowed (development and tests), accepts http, any port and internal names without a lookup', async () => {
    const lookup = jest.fn(lookupAll);
    const permissive = (url: string) => assertReceiverUrl(url, { allowPrivate: true, lookupAll: lookup });

    await expect(permissive('http://127.0.0.1:8089/hook')).resolves.toBe('http://127.0.0.1:8089/hook');
    await expect(permissive('https://loopback.example.com:22/')).resolves.toBe('https://loopback.example.com:22/');
    await expect(permissive('https://intranet/')).resolves.toBe('https://intranet/');
    expect(lookup).not.toHaveBeenCalled();
  });
});
