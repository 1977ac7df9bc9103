import net from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 that a fault test owns, in front of PostgreSQL or Redis (or of
 * nothing). It forwards both ways until frozen; frozen, it stops reading from either side, as a
 * server that stalls (or a network that stops delivering) would, and the bytes wait in the
 * sockets until it is resumed. Closing it only ever closes its own sockets.
 */
export interface TcpProxy {
  port: number;
  /** Connections accepted so far. */
  accepted: number;
  /** Stops forwarding, in both directions, on every connection and on those to come. */
  freeze(): void;
  /** Freezes as soon as a client sends bytes containing `marker`; that chunk is held back too. */
  freezeOn(marker: string): Promise<void>;
  /** Forwards what was held back and carries on, as a stalled server that wakes up would. */
  resume(): void;
  /** Closes every connection and stops listening. */
  close(): Promise<void>;
}

interface Link {
  client: net.Socket;
  upstream: net.Socket | null;
  /** Chunks that arrived while frozen (or triggered the freeze), per direction, in order. */
  heldUp: Buffer[];
  heldDown: Buffer[];
}

/**
 * Starts a proxy to `target`. Without a target it is a black hole: it accepts connections and
 * never answers.
 */
export async function startTcpProxy(target?: { host: string; port: number }): Promise<TcpProxy> {
  const links = new Set<Link>();
  let frozen = false;
  let trigger: { marker: string; fired: () => void } | null = null;

  const pauseAll = () => {
    for (const link of links) {
      link.client.pause();
      link.upstream?.pause();
    }
  };

  const server = net.createServer((client) => {
    proxy.accepted += 1;
    const upstream = target ? net.connect(target.port, target.host) : null;
    const link: Link = { client, upstream, heldUp: [], heldDown: [] };
    links.add(link);
    const drop = () => {
      client.destroy();
      upstream?.destroy();
      links.delete(link);
    };
    client.on('error', drop);
    upstream?.on('error', drop);
    upstream?.on('data', (chunk: Buffer) => (frozen ? link.heldDown.push(chunk) : client.write(chunk)));
    // A side's end is passed on only once everything held back has been forwarded.
    upstream?.on('end', () => client.end());
    client.on('end', () => {
      if (link.heldUp.length === 0) upstream?.end();
    });
    client.on('data', (chunk: Buffer) => {
      if (!frozen && trigger && chunk.includes(trigger.marker)) {
        frozen = true;
        pauseAll();
        trigger.fired();
        trigger = null;
      }
      if (frozen || !upstream) link.heldUp.push(chunk);
      else upstream.write(chunk);
    });
    if (frozen || !upstream) client.pause();
    if (frozen) upstream?.pause();
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy: TcpProxy = {
    port: (server.address() as net.AddressInfo).port,
    accepted: 0,
    freeze() {
      frozen = true;
      pauseAll();
    },
    freezeOn(marker) {
      return new Promise((resolve) => {
        trigger = { marker, fired: resolve };
      });
    },
    resume() {
      frozen = false;
      for (const link of links) {
        if (!link.upstream) continue;
        for (const chunk of link.heldDown.splice(0)) link.client.write(chunk);
        for (const chunk of link.heldUp.splice(0)) link.upstream.write(chunk);
        if (link.client.readableEnded) link.upstream.end();
        link.client.resume();
        link.upstream.resume();
      }
    },
    async close() {
      for (const link of links) {
        link.client.destroy();
        link.upstream?.destroy();
      }
      links.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
