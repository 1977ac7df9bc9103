import { ipKeyGenerator } from 'express-rate-limit';
import { clientKey } from './rate-limit';

describe('clientKey', () => {
  it('when given any form of address, then it is the key express-rate-limit itself would count it under', () => {
    const addresses = [
      '::ffff:127.0.0.1',
      '::FFFF:10.1.2.3',
      '::ffff:7f00:1',
      '127.0.0.1',
      '203.0.113.9',
      '::1',
      '::',
      '2001:db8:1:2::1',
      '2001:db8:1:2ff::1',
      '::ffff:999.0.0.1',
      '',
    ];
    for (const ip of addresses) expect([ip, clientKey(ip)]).toEqual([ip, ipKeyGenerator(ip)]);
    expect(clientKey('::ffff:127.0.0.1')).toBe('127.0.0.1');
  });
});
