import {
  AddressPolicyError,
  classifyAddress,
  resolveVettedAddresses,
  vetAddresses,
  type LookupAll,
} from './address-policy';

// Classification only: nothing here opens a socket or asks a DNS server.

describe('classifyAddress', () => {
  it.each([
    ['93.184.216.34'],
    ['1.1.1.1'],
    ['8.8.8.8'],
    ['2606:2800:220:1:248:1893:25c8:1946'],
    ['2a00:1450:4001:82b::200e'],
  ])('allows public unicast %s', (address) => {
    expect(classifyAddress(address)).toEqual({ allowed: true });
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456:789a::1', 'uniqueLocal'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    // IPv4-mapped addresses are judged by the IPv4 address inside.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    // Ranges that embed or tunnel to IPv4 fail closed.
    ['64:ff9b::a00:1', 'rfc6052'],
    ['2002:7f00:1::', '6to4'],
    ['::7f00:1', 'ipv4Compatible'],
    // Only strict literals count; shorthand that ipaddr.js would accept is not an address here.
    ['127.1', 'invalid'],
    ['example.com', 'invalid'],
    ['', 'invalid'],
  ])('refuses %s (%s)', (address, range) => {
    expect(classifyAddress(address)).toEqual({ allowed: false, range });
  });
});

describe('resolveVettedAddresses', () => {
  const fakeLookup =
    (records: Record<string, { address: string; family: number }[]>): LookupAll =>
    async (hostname) => {
      const found = records[hostname];
      if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return found;
    };
  const lookup = fakeLookup({
    'public.test': [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ],
    'mixed.test': [
      { address: '93.184.216.34', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ],
    'metadata.test': [{ address: '169.254.169.254', family: 4 }],
    'empty.test': [],
  });

  it('returns every address when all are public', async () => {
    await expect(resolveVettedAddresses('public.test', false, lookup)).resolves.toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
  });

  it('refuses a name if any one of its addresses is not public', async () => {
    await expect(resolveVettedAddresses('mixed.test', false, lookup)).rejects.toThrow(
      new AddressPolicyError('address not allowed: 10.1.2.3 (private)'),
    );
    await expect(resolveVettedAddresses('metadata.test', false, lookup)).rejects.toThrow(
      'address not allowed: 169.254.169.254 (linkLocal)',
    );
  });

  it('allows private addresses only when asked to', async () => {
    await expect(resolveVettedAddresses('mixed.test', true, lookup)).resolves.toHaveLength(2);
  });

  it('checks literal IPs without a lookup', async () => {
    const noLookup: LookupAll = () => Promise.reject(new Error('must not be called'));
    await expect(resolveVettedAddresses('93.184.216.34', false, noLookup)).resolves.toEqual([
      { address: '93.184.216.34', family: 4 },
    ]);
    await expect(resolveVettedAddresses('::ffff:7f00:1', false, noLookup)).rejects.toThrow(
      'address not allowed: ::ffff:7f00:1 (loopback)',
    );
  });

  it('reports failed and empty lookups as dns failures', async () => {
    await expect(resolveVettedAddresses('missing.test', false, lookup)).rejects.toThrow('dns lookup failed');
    await expect(resolveVettedAddresses('empty.test', false, lookup)).rejects.toThrow('dns lookup failed');
  });
});

describe('vetAddresses', () => {
  it('checks addresses resolved elsewhere by the same rules, refusing if any one is refused', () => {
    const resolved = [
      { address: '93.184.216.34', family: 4 },
      { address: '::ffff:127.0.0.1', family: 6 },
    ];

    expect(() => vetAddresses(resolved, false)).toThrow(
      new AddressPolicyError('address not allowed: ::ffff:127.0.0.1 (loopback)'),
    );
    expect(vetAddresses(resolved.slice(0, 1), false)).toEqual([{ address: '93.184.216.34', family: 4 }]);
    expect(vetAddresses(resolved, true)).toHaveLength(2);
  });
});
