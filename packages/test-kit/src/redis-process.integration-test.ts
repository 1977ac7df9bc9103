import { startRedisServer, type RedisServer } from './redis-server';
import { spawnRedis } from './redis-process';

describe('a redis-server of a test of its own', () => {
  let other: RedisServer | undefined;

  afterEach(async () => {
    await other?.kill();
    other = undefined;
  });

  it("when another test's Redis already holds its port, then it is never taken for that one: it reports its own exit and what it said", async () => {
    other = await startRedisServer();
    const start = await spawnRedis(other.port, ['--save', '', '--appendonly', 'no']);
    expect('server' in start).toBe(false);
    expect('exitedSaying' in start && start.exitedSaying).toMatch(/Address already in use/);
  });

  it('when its port is free, then it answers as itself and is gone once killed', async () => {
    other = await startRedisServer();
    const port = other.port;
    // The port freed by killing the first server: the second comes up on it as itself.
    await other.kill();
    const start = await spawnRedis(port, ['--save', '', '--appendonly', 'no']);
    if (!('server' in start)) throw new Error(`did not start: ${start.exitedSaying}`);
    expect(start.server.port).toBe(port);
    expect(start.server.gone()).toBe(false);
    await start.server.kill();
    expect(start.server.gone()).toBe(true);
  });
});
