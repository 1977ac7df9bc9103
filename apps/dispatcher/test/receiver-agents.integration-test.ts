import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { VettedAddress } from '@booking/address-policy';
import { waitUntil } from '@booking/test-kit';
import { ReceiverAgents } from '../src/delivery/receiver-agents';

// The agents' cache, on a real loopback server: a receiver whose DNS rotates its answers keeps
// one agent, and the cap on agents never cuts off a request in flight (both found by review).

const LOOPBACK: VettedAddress = { address: '127.0.0.1', family: 4 };

/** A loopback server that holds every request open until `release` is called. */
async function holdingServer() {
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    held.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    held,
    release: () => {
      for (const res of held.splice(0)) res.end('ok');
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** GET through `agent`; resolves with the status and body, rejects when the socket is cut. */
function get(url: URL, agent: http.Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

const inFlight = (agent: http.Agent) => Object.values(agent.sockets).reduce((n, s) => n + (s?.length ?? 0), 0);

describe('ReceiverAgents', () => {
  it('when the same vetted addresses come in another order, then the same agent is returned', () => {
    const agents = new ReceiverAgents();
    const url = new URL('https://receiver.test/hook');
    const a: VettedAddress = { address: '192.0.2.10', family: 4 };
    const b: VettedAddress = { address: '192.0.2.20', family: 4 };
    const c: VettedAddress = { address: '2001:db8::1', family: 6 };
    try {
      const first = agents.agentFor(url, [a, b, c]);

      expect(agents.agentFor(url, [c, a, b])).toBe(first);
      expect(agents.agentFor(url, [b, c, a])).toBe(first);
      expect(agents.agentFor(url, [a, b])).not.toBe(first);
    } finally {
      agents.destroy();
    }
  });

  it('when the cap is passed while the oldest agent has a request in flight, then that agent is kept and its request completes', async () => {
    const server = await holdingServer();
    const agents = new ReceiverAgents({ maxAgents: 1 });
    try {
      const busyUrl = new URL(`http://127.0.0.1:${server.port}/busy`);
      const busy = agents.agentFor(busyUrl, [LOOPBACK]);
      const response = get(busyUrl, busy);
      await waitUntil(() => server.held.length === 1, { timeoutMs: 5_000, what: 'the request to be held' });
      expect(inFlight(busy)).toBe(1);

      // A second origin makes two agents, one over the cap: the busy one is the oldest.
      const other = agents.agentFor(new URL(`http://localhost:${server.port}/other`), [LOOPBACK]);
      expect(other).not.toBe(busy);
      expect(agents.agentFor(busyUrl, [LOOPBACK])).toBe(busy);

      server.release();
      await expect(response).resolves.toEqual({ status: 200, body: 'ok' });

      // Idle again, it is the one evicted when the cap is passed next: the map stays bounded.
      await waitUntil(() => inFlight(busy) === 0, { timeoutMs: 5_000, what: 'the socket to go back to the pool' });
      agents.agentFor(new URL(`http://localhost:${server.port}/third`), [LOOPBACK]);
      expect(agents.agentFor(busyUrl, [LOOPBACK])).not.toBe(busy);
    } finally {
      agents.destroy();
      await server.close();
    }
  });
});
