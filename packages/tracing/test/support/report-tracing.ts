import { createRequire } from 'node:module';
import { currentTraceContext, startTracing, tracingActive } from '../../src';

// Run as its own process by tracing-off.integration-test.ts: starts tracing as a main module
// does, then loads pg as the apps do and prints what that left behind, as one JSON line.
const tracing = startTracing({ serviceName: 'tracing-report' });
const load = createRequire(__filename);
const pg = load('pg') as { Client: { prototype: { query: { __wrapped?: boolean } } } };
const report = {
  enabled: tracing.enabled,
  active: tracingActive(),
  context: currentTraceContext(),
  openTelemetryModules: Object.keys(load.cache).filter((file) => file.includes('@opentelemetry')).length,
  apiRegistered: Symbol.for('opentelemetry.js.api.1') in globalThis,
  pgWrapped: pg.Client.prototype.query.__wrapped === true,
};
console.log(JSON.stringify(report));
void tracing.shutdown();
