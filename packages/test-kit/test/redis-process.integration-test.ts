import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { freePort } from '../src/ports';
import { spawnRedis, startOnFreePort, type RedisProcess } from '../src/redis-process';
import { startRedisServer, type RedisServer } from '../src/redis-server';

const run = promisify(execFile);
const ARGS = ['--save', '', '--appendonly', 'no'];

/** The pid the server answering on `port` gives. */
async function pidOnPort(port: number): Promise<number> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'INFO', 'server'], {
    timeout: 5_000,
  });
  return Number(/process_id:(\d+)/.exec(stdout)?.[1]);
}

describe('a redis-server of a test of its own', () => {
  let other: RedisServer | undefined;
  let mine: RedisProcess | undefined;

  afterEach(async () => {
    await Promise.all([other?.kill(), mine?.kill()]);
    other = undefined;
    mine = undefined;
  });

  it("when another test's Redis already holds its port, then it is never taken for that one: it reports its own exit and what it said", async () => {
    other = await startRedisServer();
    const start = await spawnRedis(other.port, ARGS);
    if ('server' in start) mine = start.server;
    expect('exitedSaying' in start && start.exitedSaying).toMatch(/Address already in use/);
  });

  it('when its port is free, then the server answering there is the process it started', async () => {
    const start = await spawnRedis(await freePort(), ARGS);
    if (!('server' in start)) throw new Error(`did not start: ${start.exitedSaying}`);
    mine = start.server;
    expect(await pidOnPort(mine.port)).toBe(mine.pid);
  });

  it('when the port it was given is taken before it binds, then it is started on another and answers there', async () => {
    other = await startRedisServer();
    const ports = [other.port, await freePort()];
    const picked: number[] = [];
    mine = await startOnFreePort(
      async () => {
        picked.push(ports[picked.length]!);
        return picked.at(-1)!;
      },
      () => ARGS,
    );
    expect(picked).toEqual(ports);
    expect(mine.port).toBe(ports[1]);
    expect(await pidOnPort(mine.port)).toBe(mine.pid);
    expect(await pidOnPort(other.port)).not.toBe(mine.pid);
  });
});
