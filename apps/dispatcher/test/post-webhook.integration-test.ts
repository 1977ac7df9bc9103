import { execFileSync } from 'node:child_process';
import dns from 'node:dns';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { within } from '@booking/test-kit';
import { postWebhook, USER_AGENT, type PostWebhookOptions } from '../src/delivery/post-webhook';
import { ReceiverAgents } from '../src/delivery/receiver-agents';

// Every server here listens on loopback; nothing in this file sends traffic anywhere else. The
// refusal tests name other private addresses (10.0.0.1, 169.254.169.254), but the address check
// rejects them before any socket is opened.

interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: string;
}

interface TestServer {
  port: number;
  origin: string;
  requests: ReceivedRequest[];
  connections: number;
  /** Resolves when a server-side socket closes, i.e. when the client hung up. */
  socketClosed: Promise<void>;
  close(): Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

const servers: TestServer[] = [];

/** A throwaway self-signed certificate for localhost, made with the openssl CLI. */
function selfSignedLocalhostCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'post-webhook-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function startServer(handler: Handler, host = '127.0.0.1', listenPort = 0): Promise<TestServer> {
  let markClosed: () => void = () => undefined;
  const socketClosed = new Promise<void>((resolve) => (markClosed = resolve));
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      state.requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body,
      });
      handler(req, res, body);
    });
  });
  server.on('connection', (socket) => {
    state.connections += 1;
    socket.on('close', () => markClosed());
  });
  await new Promise<void>((resolve) => server.listen(listenPort, host, resolve));
  const { port } = server.address() as AddressInfo;
  const state: TestServer = {
    port,
    origin: host.includes(':') ? `http://[${host}]:${port}` : `http://${host}:${port}`,
    requests: [],
    connections: 0,
    socketClosed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(state);
  return state;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function options(overrides: Partial<PostWebhookOptions> & { url: string }): PostWebhookOptions {
  return { headers: {}, body: '{}', timeoutMs: 5_000, allowPrivateAddresses: true, ...overrides };
}

describe('postWebhook', () => {
  it('posts headers and body exactly as given and captures a 2xx response', async () => {
    const server = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks'));
    const body = JSON.stringify({ type: 'booking.confirmed', data: { name: 'Zoë 🎢', note: 'a "quoted" value' } });

    const result = await postWebhook(
      options({
        url: `${server.origin}/hooks/booking?tenant=42`,
        headers: { 'X-Webhook-Signature': 't=1700000000,v1=abc123', 'X-Webhook-Id': 'evt_1' },
        body,
      }),
    );

    expect(result).toEqual({
      ok: true,
      statusCode: 200,
      responseBody: 'thanks',
      error: null,
      durationMs: expect.any(Number),
    });
    expect(server.requests).toHaveLength(1);
    const [received] = server.requests;
    expect(received).toMatchObject({ method: 'POST', url: '/hooks/booking?tenant=42', body });
    expect(received?.headers).toMatchObject({
      'x-webhook-signature': 't=1700000000,v1=abc123',
      'x-webhook-id': 'evt_1',
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'content-length': String(Buffer.byteLength(body)),
      host: `127.0.0.1:${server.port}`,
    });
    // The header names keep the caller's spelling on the wire.
    expect(received?.rawHeaders).toContain('X-Webhook-Signature');
  });

  it('keeps the host name in the Host header while connecting to the vetted address', async () => {
    const server = await startServer((_req, res) => res.writeHead(204).end());

    const result = await postWebhook(options({ url: `http://localhost:${server.port}/` }));

    expect(result).toMatchObject({ ok: true, statusCode: 204, responseBody: '', error: null });
    expect(server.requests[0]?.headers.host).toBe(`localhost:${server.port}`);
  });

  it('connects to the address it vetted, not to whatever a second lookup returns', async () => {
    const server = await startServer((_req, res) => res.writeHead(200).end());
    // Simulates DNS rebinding: if the socket resolved the name again itself, it would get
    // 127.0.0.2, where nothing listens. Still loopback, so no traffic leaves the machine.
    const rebound = jest
      .spyOn(dns, 'lookup')
      .mockImplementation(((
        _hostname: string,
        _options: unknown,
        callback: (error: null, address: string, family: number) => void,
      ) => callback(null, '127.0.0.2', 4)) as unknown as typeof dns.lookup);
    try {
      const result = await postWebhook(options({ url: `http://localhost:${server.port}/` }));

      expect(result).toMatchObject({ ok: true, statusCode: 200, error: null });
      expect(rebound).not.toHaveBeenCalled();
    } finally {
      rebound.mockRestore();
    }
  });

  it('reports a 5xx with its status and body', async () => {
    const server = await startServer((_req, res) => res.writeHead(500).end('database on fire'));

    const result = await postWebhook(options({ url: server.origin }));

    expect(result).toMatchObject({ ok: false, statusCode: 500, responseBody: 'database on fire', error: null });
  });

  it('gives up after timeoutMs when the receiver never answers, and hangs up', async () => {
    const server = await startServer(() => undefined); // reads the request, never responds

    const started = Date.now();
    const result = await within(postWebhook(options({ url: server.origin, timeoutMs: 300 })), 3_000, 'postWebhook');
    const elapsed = Date.now() - started;

    // The upper bounds leave a second for a loaded CI machine: they tell the timeout from a hang.
    expect(result).toMatchObject({ ok: false, statusCode: null, responseBody: null, error: 'timeout after 300 ms' });
    expect(result.durationMs).toBeGreaterThanOrEqual(295);
    expect(result.durationMs).toBeLessThan(1_300);
    expect(elapsed).toBeLessThan(1_300);
    await within(server.socketClosed, 1_000, 'the socket to close'); // the request was destroyed, not left open
  });

  it('reports a refused connection', async () => {
    const server = await startServer(() => undefined);
    const closedPort = server.port;
    await server.close();

    const result = await within(postWebhook(options({ url: `http://127.0.0.1:${closedPort}/` })), 2_000, 'postWebhook');

    expect(result).toMatchObject({ ok: false, statusCode: null, error: 'connection refused' });
  });

  it('does not follow redirects', async () => {
    const target = await startServer((_req, res) => res.writeHead(200).end());
    const redirecting = await startServer((_req, res) =>
      res.writeHead(302, { location: `${target.origin}/elsewhere` }).end(),
    );

    const result = await postWebhook(options({ url: redirecting.origin }));

    expect(result).toMatchObject({ ok: false, statusCode: 302, error: 'redirect not followed (302)' });
    expect(redirecting.requests).toHaveLength(1);
    expect(target.connections).toBe(0);
  });

  it('keeps only the first maxResponseBytes of the body', async () => {
    const server = await startServer((_req, res) => res.writeHead(200).end('é'.repeat(5_000))); // 10,000 bytes

    const capped = await postWebhook(options({ url: server.origin, maxResponseBytes: 1_000 }));
    const byDefault = await postWebhook(options({ url: server.origin }));

    expect(capped).toMatchObject({ ok: true, statusCode: 200, responseBody: 'é'.repeat(500), error: null });
    expect(Buffer.byteLength(byDefault.responseBody ?? '')).toBe(4_096);
  });

  it('stops reading an endless body at the cap instead of waiting for the timeout', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200);
      const chunk = 'x'.repeat(16_384);
      const pump = setInterval(() => res.write(chunk), 5);
      res.on('close', () => clearInterval(pump));
    });

    const result = await within(postWebhook(options({ url: server.origin, timeoutMs: 10_000 })), 5_000, 'postWebhook');

    expect(result).toMatchObject({ ok: true, statusCode: 200, error: null });
    expect(result.responseBody).toHaveLength(4_096);
    expect(result.durationMs).toBeLessThan(3_000);
    await within(server.socketClosed, 1_000, 'the socket to close');
  });

  it('lets the status decide when the body is still trickling in at the deadline', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(202);
      res.write('partial'); // ...and never ends
    });

    const result = await within(postWebhook(options({ url: server.origin, timeoutMs: 300 })), 2_000, 'postWebhook');

    expect(result).toMatchObject({ ok: true, statusCode: 202, responseBody: 'partial', error: null });
    expect(result.durationMs).toBeGreaterThanOrEqual(295);
    await within(server.socketClosed, 1_000, 'the socket to close');
  });

  it('sends the host name as TLS SNI', async () => {
    // A TLS server without any certificate: it records the SNI name, then aborts the handshake.
    const seen: string[] = [];
    const tlsServer = tls.createServer({
      SNICallback: (servername, callback) => {
        seen.push(servername);
        callback(new Error('no certificate here'));
      },
    });
    tlsServer.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
    const { port } = tlsServer.address() as AddressInfo;
    try {
      const result = await within(postWebhook(options({ url: `https://localhost:${port}/` })), 2_000, 'postWebhook');

      expect(result).toMatchObject({ ok: false, statusCode: null, responseBody: null });
      expect(result.error).toEqual(expect.any(String));
      expect(seen).toEqual(['localhost']);
    } finally {
      await new Promise<void>((resolve) => tlsServer.close(() => resolve()));
    }
  });

  it('rejects a certificate it cannot verify', async () => {
    const { key, cert } = selfSignedLocalhostCertificate();
    const seen: string[] = [];
    const tlsServer = tls.createServer({ key, cert }, (socket) => socket.destroy());
    tlsServer.on('tlsClientError', () => undefined);
    tlsServer.on('secureConnection', () => seen.push('handshake completed'));
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
    const { port } = tlsServer.address() as AddressInfo;
    try {
      const result = await within(postWebhook(options({ url: `https://localhost:${port}/` })), 2_000, 'postWebhook');

      expect(result).toMatchObject({ ok: false, statusCode: null, error: 'tls error: self-signed certificate' });
      expect(seen).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => tlsServer.close(() => resolve()));
    }
  });

  it('reports a receiver that does not speak TLS on an https URL', async () => {
    const server = await startServer((_req, res) => res.writeHead(200).end());

    const result = await postWebhook(options({ url: `https://127.0.0.1:${server.port}/` }));

    expect(result).toMatchObject({ ok: false, statusCode: null, error: expect.stringMatching(/^tls error: /) });
    expect(server.requests).toHaveLength(0);
  });

  describe('with keep-alive agents', () => {
    const agents = new ReceiverAgents();
    afterEach(() => agents.destroy());

    it('when 20 deliveries go to one receiver, 5 at a time, then they share at most 5 connections', async () => {
      const server = await startServer((_req, res) => res.writeHead(200).end('ok'));

      for (let round = 0; round < 4; round += 1) {
        const results = await Promise.all(
          Array.from({ length: 5 }, () => postWebhook(options({ url: `${server.origin}/`, agents }))),
        );
        expect(results.every((r) => r.ok)).toBe(true);
      }

      expect(server.requests).toHaveLength(20);
      expect(server.connections).toBeLessThanOrEqual(5);
    });

    it('when the name resolves to another address, then the next attempt connects there instead of reusing the pooled socket', async () => {
      // Both loopback: 127.0.0.2 is loopback on Linux too, so no traffic leaves the machine.
      const first = await startServer((_req, res) => res.writeHead(200).end());
      const second = await startServer((_req, res) => res.writeHead(200).end(), '127.0.0.2', first.port);
      let answer = '127.0.0.1';
      const lookupAll = () => Promise.resolve([{ address: answer, family: 4 }]);
      const url = `http://hooks.test:${first.port}/`;

      const before = await postWebhook(options({ url, agents, lookupAll }));
      answer = '127.0.0.2';
      const after = await postWebhook(options({ url, agents, lookupAll }));

      expect([before.ok, after.ok]).toEqual([true, true]);
      expect([first.requests.length, second.requests.length]).toEqual([1, 1]);
    });

    it('when the name starts resolving to a refused address, then the attempt is refused and the pooled socket is not used', async () => {
      const server = await startServer((_req, res) => res.writeHead(200).end());
      let answers = [{ address: '127.0.0.1', family: 4 }];
      const lookupAll = () => Promise.resolve(answers);
      const url = `http://hooks.test:${server.port}/`;
      expect(await postWebhook(options({ url, agents, lookupAll }))).toMatchObject({ ok: true });

      // A second record that is no address at all: the whole answer is refused, whatever else it holds.
      answers = [
        { address: '127.0.0.1', family: 4 },
        { address: '127.0.0.1', family: 5 },
      ];
      const refused = await postWebhook(options({ url, agents, lookupAll }));

      expect(refused).toMatchObject({
        ok: false,
        statusCode: null,
        error: 'address not allowed: 127.0.0.1 (invalid)',
      });
      expect(server.requests).toHaveLength(1);
      expect(server.connections).toBe(1);
    });
  });

  describe('with allowPrivateAddresses false', () => {
    it('refuses plain http before connecting', async () => {
      const server = await startServer((_req, res) => res.writeHead(200).end());

      const result = await postWebhook(options({ url: `${server.origin}/`, allowPrivateAddresses: false }));

      expect(result).toMatchObject({
        ok: false,
        statusCode: null,
        error: 'scheme not allowed: http: (https required)',
      });
      expect(server.connections).toBe(0);
    });

    it('refuses loopback names and literals before connecting', async () => {
      const v4 = await startServer((_req, res) => res.writeHead(200).end());
      const v6 = await startServer((_req, res) => res.writeHead(200).end(), '::1');
      const cases: [string, RegExp][] = [
        ['https://127.0.0.1/', /^address not allowed: 127\.0\.0\.1 \(loopback\)$/],
        [`https://127.0.0.1:${v4.port}/`, /^address not allowed: 127\.0\.0\.1 \(loopback\)$/],
        ['https://localhost/', /^address not allowed: (127\.0\.0\.1|::1) \(loopback\)$/],
        [`https://localhost:${v4.port}/`, /^address not allowed: (127\.0\.0\.1|::1) \(loopback\)$/],
        ['https://[::1]/', /^address not allowed: ::1 \(loopback\)$/],
        [`https://[::1]:${v6.port}/`, /^address not allowed: ::1 \(loopback\)$/],
        ['https://[::ffff:127.0.0.1]/', /^address not allowed: ::ffff:7f00:1 \(loopback\)$/],
        [`https://[::ffff:127.0.0.1]:${v4.port}/`, /^address not allowed: ::ffff:7f00:1 \(loopback\)$/],
        // WHATWG URL parsing turns these spellings of 127.0.0.1 into the dotted form first.
        [`https://2130706433:${v4.port}/`, /^address not allowed: 127\.0\.0\.1 \(loopback\)$/],
        [`https://0x7f.1:${v4.port}/`, /^address not allowed: 127\.0\.0\.1 \(loopback\)$/],
      ];

      for (const [url, expected] of cases) {
        const result = await postWebhook(options({ url, allowPrivateAddresses: false }));
        expect({ url, ...result }).toMatchObject({
          url,
          ok: false,
          statusCode: null,
          error: expect.stringMatching(expected),
        });
      }
      expect(v4.connections).toBe(0);
      expect(v6.connections).toBe(0);
    });

    it.each([
      ['https://10.0.0.1/', 'address not allowed: 10.0.0.1 (private)'],
      ['https://192.168.0.10:8443/', 'address not allowed: 192.168.0.10 (private)'],
      ['https://169.254.169.254/latest/meta-data/', 'address not allowed: 169.254.169.254 (linkLocal)'],
      ['https://[fd00::1]/', 'address not allowed: fd00::1 (uniqueLocal)'],
      ['https://0.0.0.0/', 'address not allowed: 0.0.0.0 (unspecified)'],
    ])('refuses %s before connecting', async (url, error) => {
      const result = await within(postWebhook(options({ url, allowPrivateAddresses: false })), 1_000, 'postWebhook');

      expect(result).toMatchObject({ ok: false, statusCode: null, responseBody: null, error });
    });
  });

  it.each([
    ['ftp://127.0.0.1/hook', 'scheme not allowed: ftp:'],
    ['file:///etc/passwd', 'scheme not allowed: file:'],
    ['not a url', 'invalid url'],
  ])('refuses %s without throwing', async (url, error) => {
    await expect(postWebhook(options({ url }))).resolves.toMatchObject({ ok: false, statusCode: null, error });
  });

  it('turns a header value the HTTP client rejects into a failed attempt', async () => {
    const server = await startServer((_req, res) => res.writeHead(200).end());

    const result = await postWebhook(options({ url: server.origin, headers: { 'X-Injected': 'a\r\nHost: evil' } }));

    expect(result).toMatchObject({ ok: false, statusCode: null, error: expect.any(String) });
    expect(server.connections).toBe(0);
  });
});
