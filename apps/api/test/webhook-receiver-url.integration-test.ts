import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { bearer, createTestApp, hostsTableLookup, LOCAL_HOSTS, seedTenant, type TestApp } from '@booking/test-kit';

// POST /api/webhooks/endpoints with private URLs not allowed (production's setting): what is
// refused at subscription, before any delivery is attempted. Host names resolve through a table
// in memory; nothing here sends a DNS query or connects anywhere.

describe('webhook receiver URLs at subscription', () => {
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    t = createTestApp(
      { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' },
      {
        lookupHost: hostsTableLookup({
          ...LOCAL_HOSTS,
          'hooks.example.net': ['93.184.216.34'],
          'loopback.example.net': ['127.0.0.1'],
          'metadata.example.net': ['169.254.169.254'],
          'split.example.net': ['93.184.216.34', '10.20.30.40'],
        }),
      },
    );
    demo = await seedTenant(t.deps);
  });
  afterAll(() => t.close());

  const subscribe = (url: string) =>
    request(t.app).post('/api/webhooks/endpoints').set('Authorization', bearer(demo.api_keys.admin)).send({ url });
  const endpointCount = () => t.deps.db.webhookEndpoint.count({ where: { tenantId: demo.tenant.id } });

  it.each([
    ['a single-label host name', 'https://intranet/hook'],
    ['a single-label host name with a trailing dot', 'https://intranet./hook'],
    ['a .test name', 'https://receiver.test/hook'],
    ['a .home.arpa name', 'https://nas.home.arpa/hook'],
    ['a .lan name', 'https://nas.lan/hook'],
    ['a privileged port other than 443', 'https://hooks.example.net:22/hook'],
    ['port 80', 'https://hooks.example.net:80/hook'],
    ['a name that resolves to loopback', 'https://loopback.example.net/hook'],
    ['a name that resolves to the cloud metadata address', 'https://metadata.example.net/hook'],
    ['a name with one private address among public ones', 'https://split.example.net/hook'],
  ])('when the url has %s, then it is 400 invalid_webhook_url and nothing is stored', async (_case, url) => {
    const before = await endpointCount();

    const res = await subscribe(url);

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_webhook_url');
    expect(JSON.stringify(res.body)).not.toMatch(/127\.0\.0\.1|169\.254|10\.20\.30\.40/);
    expect(await endpointCount()).toBe(before);
  });

  it.each([
    ['a public name on 443', 'https://hooks.example.net/hook'],
    ['a public name on an unprivileged port', 'https://hooks.example.net:8443/hook'],
    ['a name that does not resolve yet', 'https://soon.example.net/hook'],
  ])('when the url is %s, then it is subscribed', async (_case, url) => {
    const res = await subscribe(url);

    expect(res.status).toBe(201);
    expect(res.body.url).toBe(url);
  });
});
