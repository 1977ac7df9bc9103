import { spawn } from 'node:child_process';
import path from 'node:path';
import { confirmedBooking, createBooking, createTestApp, seedTenant, type TestApp } from '@booking/test-kit';

const ROOT = path.resolve(__dirname, '../../..');
const REPORT = path.join(__dirname, 'support', 'report-tracing.ts');

/** Runs the report script as a process of its own with `env` over a tracing-free environment. */
function report(env: Record<string, string>): Promise<Record<string, unknown>> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  const child = spawn(process.execPath, ['--import', 'tsx', REPORT], {
    cwd: ROOT,
    env: { ...clean, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve, reject) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line.startsWith('{')) reject(new Error(`report exited ${code}: ${out}\n${err}`));
      else resolve(JSON.parse(line) as Record<string, unknown>);
    }),
  );
}

describe('tracing off (the default)', () => {
  it('when no OTLP endpoint is set, then no OpenTelemetry module is loaded, nothing is registered and pg is left as it is', async () => {
    expect(await report({})).toEqual({
      enabled: false,
      active: false,
      context: null,
      openTelemetryModules: 0,
      apiRegistered: false,
      pgWrapped: false,
    });
  }, 30_000);

  it('when an endpoint is set but OTEL_SDK_DISABLED is true, then it stays off', async () => {
    const off = await report({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' });
    expect(off).toMatchObject({ enabled: false, openTelemetryModules: 0, pgWrapped: false });
  }, 30_000);

  it('when an endpoint is set, then the SDK is loaded and registered and pg is instrumented (what the checks above would see)', async () => {
    const on = await report({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' });
    expect(on).toMatchObject({ enabled: true, active: true, context: null, apiRegistered: true, pgWrapped: true });
    expect(on.openTelemetryModules).toBeGreaterThan(0);
  }, 30_000);

  describe('outbox rows', () => {
    let t: TestApp;
    beforeAll(() => {
      t = createTestApp();
    });
    afterAll(() => t.close());

    it('when tracing is off, then events of the one-statement booking and of the transaction path (recordEvent) have no trace context', async () => {
      const demo = await seedTenant(t.deps);
      const plain = await createBooking(t, demo);
      // Paid by gift card: the transaction path, whose events recordEvent writes.
      const paid = await confirmedBooking(t, demo);
      const rows = await t.deps.db.event.findMany({
        where: { entityId: { in: [plain.booking_id, paid.booking_id] } },
        select: { name: true, traceparent: true, tracestate: true },
      });
      expect(rows.map((row) => row.name)).toEqual(
        expect.arrayContaining(['booking.created', 'booking.created', 'booking.confirmed']),
      );
      expect(rows.filter((row) => row.traceparent !== null || row.tracestate !== null)).toEqual([]);
    });
  });
});
