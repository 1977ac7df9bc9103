import { ipKeyGenerator } from 'express-rate-limit';
import { clientKey } from './rate-limit';

describe('the client a rate limit counts against', () => {
  it('when an IPv4 client reaches a dual-stack listener (::ffff:a.b.c.d), then it counts as its IPv4 address', () => {
    expect(clientKey({ ip: '::ffff:203.0.113.7' })).toBe('203.0.113.7');
    expect(clientKey({ ip: '::ffff:127.0.0.1' })).toBe('127.0.0.1');
  });

  it('when the address is IPv4, then it is the key as it is', () => {
    expect(clientKey({ ip: '198.51.100.23' })).toBe('198.51.100.23');
  });

  it('when the address is IPv6, then its /56 network is the key, so hopping addresses in it does not reset the budget', () => {
    const first = clientKey({ ip: '2001:db8:abcd:1200::1' });
    expect(first).toBe('2001:db8:abcd:1200::/56');
    expect(clientKey({ ip: '2001:db8:abcd:12ff:ffff::9' })).toBe(first);
    expect(clientKey({ ip: '2001:db8:abcd:1300::1' })).not.toBe(first);
  });

  it('when a mapped address is written another way, then it gets the key express-rate-limit gives it', () => {
    for (const ip of ['::FFFF:192.0.2.1', '::ffff:c000:201', '::ffff:999.0.0.1', '::1']) {
      expect(clientKey({ ip })).toBe(ipKeyGenerator(ip));
    }
  });

  it('when Express knows no address (the socket is gone), then every such request shares one budget', () => {
    expect(clientKey({ ip: undefined })).toBe('unknown');
  });
});
