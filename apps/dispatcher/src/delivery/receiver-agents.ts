import type { LookupAddress, LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { VettedAddress } from '@booking/address-policy';

/** Agents kept at most; beyond that the least recently used one with no request in flight is closed. */
const MAX_AGENTS = 1_000;
/**
 * An idle socket is closed after this long: under the 5 s keep-alive of common servers (Node's
 * own default), so the receiver rarely closes a socket just as we send on it.
 */
const IDLE_SOCKET_MS = 4_000;

/**
 * Keep-alive agents for webhook receivers, one per URL origin and set of vetted addresses. Each
 * agent connects only to the addresses it was made for (its lookup answers with nothing else and
 * overrides any lookup of a request), so a pooled socket always goes to an address that passed
 * the address policy. Every attempt still resolves and vets the name first: when the answer
 * changes, the attempt takes (or makes) the agent of the new addresses, and a refused answer is
 * refused before any agent is asked for a socket.
 */
export class ReceiverAgents {
  private readonly agents = new Map<string, http.Agent>();
  private readonly maxAgents: number;

  /** `maxAgents` is lowered only by tests, to reach the cap with a few agents. */
  constructor(options: { maxAgents?: number } = {}) {
    this.maxAgents = options.maxAgents ?? MAX_AGENTS;
  }

  agentFor(url: URL, addresses: VettedAddress[]): http.Agent {
    // Sorted: a receiver whose DNS rotates its answers keeps one agent and its sockets.
    const key = `${url.protocol}//${url.host} ${addresses
      .map((a) => a.address)
      .sort()
      .join(' ')}`;
    const existing = this.agents.get(key);
    if (existing) {
      // Map order is insertion order: moving it to the end keeps the oldest first for eviction.
      this.agents.delete(key);
      this.agents.set(key, existing);
      return existing;
    }
    const Agent = url.protocol === 'https:' ? https.Agent : http.Agent;
    const agent = new Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS, lookup: pinnedLookup(addresses) });
    this.agents.set(key, agent);
    if (this.agents.size > this.maxAgents) this.evictOneIdle();
    return agent;
  }

  /**
   * Closes the least recently used agent that has no request in flight (its idle sockets go with
   * it). Agents busy with a request are never cut off; there are at most as many as the worker's
   * concurrency, so the map stays bounded.
   */
  private evictOneIdle(): void {
    for (const [key, agent] of this.agents) {
      if (Object.values(agent.sockets).some((sockets) => sockets && sockets.length > 0)) continue;
      this.agents.delete(key);
      agent.destroy();
      return;
    }
  }

  /** Closes every pooled socket (requests in flight are cut off). */
  destroy(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

/** A `lookup` for net/tls that answers only with already vetted addresses, whatever it is asked. */
export function pinnedLookup(addresses: VettedAddress[]): LookupFunction {
  return (_hostname: string, lookupOptions: LookupOptions, callback) => {
    const family = lookupOptions.family === 'IPv4' ? 4 : lookupOptions.family === 'IPv6' ? 6 : lookupOptions.family;
    const matching = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
    const first = matching[0];
    if (!first) {
      callback(Object.assign(new Error('dns lookup failed'), { code: 'ENOTFOUND' }), '');
    } else if (lookupOptions.all) {
      // Node 20 asks for all addresses (happy eyeballs, autoSelectFamily) and tries them in turn.
      callback(
        null,
        matching.map((a): LookupAddress => ({ address: a.address, family: a.family })),
      );
    } else {
      callback(null, first.address, first.family);
    }
  };
}
