import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from './ports';
import { startOnFreePort, type RedisProcess } from './redis-process';
import { waitUntil } from './wait';

const run = promisify(execFile);

/**
 * One redis-server of a test's cluster. Its `kill()` SIGKILLs this node only: no shutdown, no
 * failover handed over; the cluster must notice.
 */
export type ClusterNode = RedisProcess;

/**
 * A Redis Cluster of the test's own: `masters` masters with one replica each, in cluster mode on
 * free ports of 127.0.0.1, without persistence, in a temporary directory. Only these processes
 * are ever stopped, by their pids; the machine's shared Redis is never touched.
 */
export interface RedisCluster {
  nodes: ClusterNode[];
  /** `host:port` seeds, as REDIS_CLUSTER_NODES takes them. */
  seeds: string;
  /** Runs redis-cli against one node and returns its output. */
  cli(port: number, ...args: string[]): Promise<string>;
  /**
   * Resolves once everything `master` has accepted so far is on one of its replicas: a write of a
   * probe key under `hashTag` (`{tag}`, a tag of a slot `master` serves), then `WAIT` on the same
   * connection.
   * (`WAIT` covers only the writes of the connection it is sent on, and replication is one
   * ordered stream, so the probe's acknowledgement covers every write before it.)
   */
  replicated(master: ClusterNode, hashTag: string, timeoutMs?: number): Promise<void>;
  /** The node serving `key` as a master right now. */
  masterOf(key: string): Promise<ClusterNode>;
  /** Until every slot is served again (`cluster_state:ok`) as seen from every live node. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** SIGKILLs every node and removes the directory. */
  stop(): Promise<void>;
}

/** A port whose cluster bus port (+10000) is free too. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = await freePort();
    if (port + 10_000 > 65_535 || taken.has(port)) continue;
    const bus = await new Promise<boolean>((resolve) => {
      const probe = net.createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port + 10_000, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (bus) return port;
  }
  throw new Error('no free port pair for a cluster node');
}

export async function startRedisCluster(
  options: { masters?: number; nodeTimeoutMs?: number } = {},
): Promise<RedisCluster> {
  const { masters = 3, nodeTimeoutMs = 2_000 } = options;
  const dir = await mkdtemp(path.join(tmpdir(), 'redis-cluster-'));
  const nodes: ClusterNode[] = [];
  const cli = async (port: number, ...args: string[]) =>
    (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 30_000 })).stdout;

  const stop = async () => {
    await Promise.all(nodes.map((node) => node.kill()));
    await rm(dir, { recursive: true, force: true });
  };

  try {
    const taken = new Set<number>();
    const pickPort = async () => {
      const port = await freeClusterPort(taken);
      taken.add(port);
      return port;
    };
    const args = (port: number) => [
      '--dir',
      dir,
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      `nodes-${port}.conf`,
      '--cluster-node-timeout',
      String(nodeTimeoutMs),
      '--save',
      '',
      '--appendonly',
      'no',
      '--maxmemory-policy',
      'noeviction',
      '--repl-diskless-sync-delay',
      '0',
    ];
    // A node's cluster bus port (+10000) can be taken too before it binds: startOnFreePort tries another pair.
    for (let i = 0; i < masters * 2; i += 1) nodes.push(await startOnFreePort(pickPort, args));
    await run(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...nodes.map((node) => `127.0.0.1:${node.port}`),
        '--cluster-replicas',
        '1',
        '--cluster-yes',
      ],
      { timeout: 30_000 },
    );
  } catch (error) {
    await stop();
    throw error;
  }

  const alive = () => nodes.filter((node) => !node.gone());
  const cluster: RedisCluster = {
    nodes,
    seeds: nodes.map((node) => `127.0.0.1:${node.port}`).join(','),
    cli,
    async replicated(master, hashTag, timeoutMs = 10_000) {
      const client = new Redis({ host: '127.0.0.1', port: master.port, lazyConnect: true, maxRetriesPerRequest: 0 });
      try {
        await client.connect();
        await client.set(`${hashTag}:replication-probe`, String(Date.now()));
        const acknowledged = await client.wait(1, timeoutMs);
        if (acknowledged < 1)
          throw new Error(`no replica of ${master.port} acknowledged its writes within ${timeoutMs} ms`);
      } finally {
        client.disconnect();
      }
    },
    async masterOf(key) {
      const seed = alive()[0]!.port;
      const slot = Number((await cli(seed, 'CLUSTER', 'KEYSLOT', key)).trim());
      // CLUSTER NODES: `id host:port@bus flags master-id ping pong epoch link slot-ranges...`.
      for (const line of (await cli(seed, 'CLUSTER', 'NODES')).split('\n')) {
        const [, address = '', flags = '', , , , , , ...ranges] = line.trim().split(' ');
        if (!flags.split(',').includes('master') || flags.includes('fail')) continue;
        const serves = ranges.some((range) => {
          const [start, end = start] = range.split('-').map(Number);
          return start! <= slot && slot <= end!;
        });
        const port = Number(address.split('@')[0]!.split(':')[1]);
        // A killed master keeps its slots until the others mark it failing (a node timeout).
        const node = nodes.find((candidate) => candidate.port === port && !candidate.gone());
        if (serves && node) return node;
      }
      throw new Error(`no live master serves slot ${slot}`);
    },
    async waitHealthy(timeoutMs = 20_000) {
      await waitUntil(
        async () => {
          for (const node of alive()) {
            const info = await cli(node.port, 'CLUSTER', 'INFO').catch(() => '');
            if (!info.includes('cluster_state:ok')) return false;
          }
          return true;
        },
        { timeoutMs, intervalMs: 100, what: 'every live cluster node to report cluster_state:ok' },
      );
    },
    stop,
  };
  try {
    await cluster.waitHealthy();
    // A replica takes over only with a recent copy of its master: wait for every link to be up.
    await waitUntil(
      async () => {
        let replicas = 0;
        for (const node of nodes) {
          const info = await cli(node.port, 'INFO', 'replication');
          if (!info.includes('role:slave')) continue;
          if (!info.includes('master_link_status:up')) return false;
          replicas += 1;
        }
        return replicas === masters;
      },
      { timeoutMs: 20_000, intervalMs: 100, what: 'every replica to be in sync with its master' },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return cluster;
}
