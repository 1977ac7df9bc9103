import net from 'node:net';

/**
 * A port on 127.0.0.1 that nothing listens on right now: bind a server there, or point a client
 * at it to have the connection refused. Another process could take it before the caller does;
 * on a test machine that race is rare enough.
 */
export async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', resolve);
  });
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
