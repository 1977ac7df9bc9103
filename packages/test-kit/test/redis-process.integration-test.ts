import { execFile } from 'node:child_process';
import path from 'node:path';
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

  it('when the port it was given is taken before it binds, then it is started on another, and the server holding the first is left alone', async () => {
    other = await startRedisServer();
    const otherPid = await pidOnPort(other.port);
    const picked: number[] = [];
    mine = await startOnFreePort(
      async () => {
        const port = picked.length === 0 ? other!.port : await freePort();
        picked.push(port);
        return port;
      },
      () => ARGS,
    );
    expect(picked[0]).toBe(other.port);
    expect(picked.length).toBeGreaterThanOrEqual(2);
    expect(mine.port).toBe(picked.at(-1));
    expect(await pidOnPort(mine.port)).toBe(mine.pid);
    expect(await pidOnPort(other.port)).toBe(otherPid);
  });

  it('when a server is killed and started again, then a new process answers on the same port', async () => {
    other = await startRedisServer();
    const first = await pidOnPort(other.port);
    await other.kill();
    await other.start();
    const second = await pidOnPort(other.port);
    expect(second).toBeGreaterThan(0);
    expect(second).not.toBe(first);
  });

  it('when redis-server cannot be spawned at all, then it says so at once instead of trying other ports', async () => {
    // In a process of its own whose PATH has no redis-server (a test's process.env is Jest's copy,
    // which a spawn does not read).
    const script = `require('./packages/test-kit/src/redis-process.ts')
      .startOnFreePort(async () => 6399, () => [])
      .then(() => console.log('started'), (error) => console.log(error.message));`;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: path.resolve(__dirname, '../../..'),
      env: { ...process.env, PATH: '/nonexistent' },
      timeout: 20_000,
    });
    expect(stdout.trim()).toMatch(/^redis-server could not be started: .*ENOENT/);
  });
});
