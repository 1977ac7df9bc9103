/**
 * `pnpm bench:tracing`: what tracing costs (docs/tracing.md).
 *
 * 1. In this process, with tracing off (as every process is unless OTEL_EXPORTER_OTLP_ENDPOINT is
 *    set): the time per call of what the hot paths added (the outbox row's trace context, a
 *    span start), beside the time of building one outbox row.
 * 2. Holds and bookings through the API with tracing off, then on (every request traced, spans
 *    exported to a sink on 127.0.0.1 that reads and drops them), in one run.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { eventRow } from '@booking/events';
import { currentTraceContext, startSpan, tracingActive } from '@booking/tracing';
import { bookingRequests, holdRequests, prepareBookings, startApi } from './lib/api';
import { prepareCatalogue } from './lib/catalogue';
import { rssMb, runBench, stopAll, stopChild } from './lib/children';
import { benchDatabase, loadCheckout } from './lib/checkout';
import { databaseUrl, ROOT } from './lib/env';
import { CONNECTIONS, DURATION_SECONDS, WARMUP_SECONDS, figures, measure } from './lib/load';
import { printTable, type Row } from './lib/report';

const CALLS = 1_000_000;
const BOOKINGS = 2_000;
const SLOTS = 200;

/** Nanoseconds per call of `work`, best of 5 rounds of `calls` (after one discarded round). */
function nsPerCall(calls: number, work: () => unknown): number {
  let best = Infinity;
  for (let round = 0; round < 6; round++) {
    const started = performance.now();
    for (let i = 0; i < calls; i++) work();
    const ns = ((performance.now() - started) * 1e6) / calls;
    if (round > 0) best = Math.min(best, ns);
  }
  return best;
}

function offPathCosts(): string[] {
  if (tracingActive()) throw new Error('unset OTEL_EXPORTER_OTLP_ENDPOINT: this part measures tracing off');
  const event = {
    tenantId: '00000000-0000-4000-8000-000000000001',
    name: 'customer.created',
    entityType: 'customer',
    entityId: '00000000-0000-4000-8000-000000000002',
    fields: { source: 'booking' },
  } as const;
  const row = nsPerCall(CALLS / 10, () => eventRow(event as never));
  const context = nsPerCall(CALLS, currentTraceContext);
  const span = nsPerCall(CALLS, () => startSpan('x').end());
  return [
    `Tracing off, in-process, best of 5 rounds: building one outbox row (eventRow) ${row.toFixed(0)} ns;`,
    `of which its trace context (currentTraceContext) ${context.toFixed(1)} ns; a span start and end ${span.toFixed(1)} ns.`,
  ];
}

/** An OTLP/HTTP endpoint on 127.0.0.1 that reads and drops what it is sent, counting the bytes. */
async function startSink(): Promise<{ url: string; bytes: () => number; close: () => Promise<void> }> {
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bytes: () => bytes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function main(): Promise<void> {
  const header = offPathCosts();
  const checkout = await loadCheckout('after', ROOT);
  const url = databaseUrl(benchDatabase(checkout, 'booking_bench'));
  const target = await prepareCatalogue(checkout, url);
  const sink = await startSink();
  const rows: Row[] = [];
  try {
    for (const mode of ['off', 'on'] as const) {
      const env: Record<string, string> =
        mode === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_BSP_MAX_QUEUE_SIZE: '65536' } : {};
      const api = await startApi(checkout, url, undefined, env);
      try {
        const holds = `holds via API, tracing ${mode}`;
        const slots = await target.makeSlots(SLOTS);
        const m = await measure(holds, { urls: [api.url], requests: holdRequests(target.experienceId, slots) });
        rows.push({
          name: holds,
          unit: 'rps',
          ...(mode === 'on' ? { against: 'holds via API, tracing off' } : {}),
          ...figures(m),
        });

        const bookings = `bookings via API, tracing ${mode}`;
        const bodies = await prepareBookings(api, target, await target.makeSlots(SLOTS), BOOKINGS + 300);
        const b = await measure(
          bookings,
          { urls: [api.url], requests: bookingRequests(bodies.slice(200)), amount: BOOKINGS },
          { urls: [api.url], requests: bookingRequests(bodies.slice(0, 200)), amount: 200 },
        );
        rows.push({
          name: bookings,
          unit: 'rps',
          ...(mode === 'on' ? { against: 'bookings via API, tracing off' } : {}),
          ...figures(b),
          rssMb: { api: rssMb(api.child) },
        });
      } finally {
        await stopChild(api.child);
      }
    }
    console.log('');
    printTable(rows, [
      ...header,
      `Loopback, one API process. HTTP: ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${DURATION_SECONDS} s (holds), ` +
        `${BOOKINGS} bookings on ${SLOTS} slots. Tracing on: every request traced (parent-based, always on) and exported ` +
        `to a sink on 127.0.0.1 (${(sink.bytes() / 1e6).toFixed(1)} MB of OTLP/JSON received).`,
    ]);
  } finally {
    await sink.close();
    await target.close();
    await stopAll();
  }
}

runBench(main);
