import net from 'node:net';
import path from 'node:path';
import { freePort, killAllServiceProcesses, sleep, startServiceProcess, within } from '@booking/test-kit';

// A request that arrived before SIGTERM and is still being sent when the listener closes: its
// answer was promised keep-alive, so its connection goes idle only after close(). The API must
// still close it and exit 0 soon after, not hold on until the force exit at the grace period.
const DRAIN_MS = 200;
const GRACE_MS = 8_000;

describe('API shutdown with a request straddling the close of its listener', () => {
  afterAll(async () => {
    await killAllServiceProcesses();
  });

  it('when a keep-alive request finishes after the listener closed, then its connection is closed and the API exits 0', async () => {
    const port = await freePort();
    const api = await startServiceProcess({
      name: 'api',
      entry: path.join('apps', 'api', 'src', 'main.ts'),
      env: {
        PORT: String(port),
        API_METRICS_PORT: String(await freePort()),
        SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
        SHUTDOWN_GRACE_MS: String(GRACE_MS),
      },
      readyUrl: `http://127.0.0.1:${port}/healthz`,
    });

    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    const socketClosed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const body = JSON.stringify({ slot_id: 'not-a-uuid', experience_id: 'not-a-uuid', seats: 1 });
    // Headers now: the request is in flight before the signal.
    socket.write(
      `POST /api/bookings/hold HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    );
    await sleep(200); // the headers reach the server before the signal
    const signalledAt = Date.now();
    api.child.kill('SIGTERM');
    await sleep(DRAIN_MS + 300); // the body comes after the listener has closed
    socket.write(body);

    await within(socketClosed, 3_000, 'the server to close the straddling connection');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(await within(api.exited, 3_000, 'the API to exit')).toBe('exit 0');
    expect(Date.now() - signalledAt).toBeLessThan(GRACE_MS);
  }, 60_000);
});
