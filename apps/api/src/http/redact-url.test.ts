import { redactUrl } from './redact-url';

describe('redactUrl', () => {
  it('when a path carries a waiver token, then the token is replaced in every request-target form', () => {
    expect(redactUrl('/api/waivers/t1.abc.def')).toBe('/api/waivers/[token]');
    expect(redactUrl('/api/waivers/t1.abc.def/sign')).toBe('/api/waivers/[token]/sign');
    expect(redactUrl('/API/Waivers/not-even-a-token/sign')).toBe('/API/Waivers/[token]/sign');
    expect(redactUrl('http://api.example/api/waivers/t1.abc.def/sign')).toBe(
      'http://api.example/api/waivers/[token]/sign',
    );
    expect(redactUrl('//api/waivers/t1.abc.def')).toBe('//api/waivers/[token]');
    expect(redactUrl('//evil/api/waivers/secret?x=1')).toBe('//evil/api/waivers/[token]?x=[redacted]');
  });

  it('when a signed token appears anywhere else, then it is replaced too', () => {
    expect(redactUrl('/api/bookings/t1.abc.def')).toBe('/api/bookings/[token]');
    expect(redactUrl('/x?cursor=T1.abc.def')).toBe('/x?cursor=[token]');
  });

  it('when a query carries personal data, then only harmless values are kept', () => {
    expect(redactUrl('/api/v1/customers?email=ada%40example.com&limit=5')).toBe(
      '/api/v1/customers?email=[redacted]&limit=5',
    );
    expect(redactUrl('/api/widget/experience?tenant=demo&experience=kayak')).toBe(
      '/api/widget/experience?tenant=demo&experience=kayak',
    );
    expect(redactUrl('/p?EMAIL=a@b.c#frag')).toBe('/p?EMAIL=[redacted]');
    expect(redactUrl('/p?flag')).toBe('/p?flag=[redacted]');
  });
});
