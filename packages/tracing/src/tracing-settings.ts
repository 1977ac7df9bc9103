/** What a process traces with, read from OpenTelemetry's standard environment variables. */
export type TracingSettings =
  | { enabled: false }
  | {
      enabled: true;
      serviceName: string;
      sampler: SamplerSetting;
      /** Batch span processor: how often and how much is exported (OTEL_BSP_*). */
      batch: {
        scheduledDelayMillis: number;
        maxQueueSize: number;
        maxExportBatchSize: number;
        exportTimeoutMillis: number;
      };
    };

export type SamplerSetting =
  | { kind: 'always_on' | 'always_off' | 'parentbased_always_on' | 'parentbased_always_off' }
  | { kind: 'traceidratio' | 'parentbased_traceidratio'; ratio: number };

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/** Raised when the OTEL_* variables ask for something this service cannot do; names each one. */
export class TracingSettingsError extends Error {
  override name = 'TracingSettingsError';
}

type Env = Record<string, string | undefined>;

/**
 * Tracing is on when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
 * OTEL_EXPORTER_OTLP_ENDPOINT) and neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none
 * turns it off. Spans are exported as OTLP/HTTP with JSON bodies, the one protocol of the
 * exporter we ship: asking for another (grpc, http/protobuf) or another exporter fails at start
 * instead of silently exporting nothing. The exporter reads its own OTEL_EXPORTER_OTLP_* settings
 * (endpoint, headers, timeout, certificates).
 */
export function tracingSettings(env: Env, defaultServiceName: string): TracingSettings {
  const value = (name: string) => env[name]?.trim() || undefined;
  if (value('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return { enabled: false };
  const exporter = value('OTEL_TRACES_EXPORTER')?.toLowerCase();
  if (exporter === 'none') return { enabled: false };
  if (!value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') && !value('OTEL_EXPORTER_OTLP_ENDPOINT')) return { enabled: false };

  const problems: string[] = [];
  if (exporter !== undefined && exporter !== 'otlp')
    problems.push(`OTEL_TRACES_EXPORTER: only otlp (or none) is supported`);
  const protocol = value('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? value('OTEL_EXPORTER_OTLP_PROTOCOL');
  if (protocol !== undefined && protocol !== 'http/json') {
    problems.push(`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: only http/json is supported, not ${protocol}`);
  }
  const number = (name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const parsed = Number(raw);
    if (!Number.isFinite(parsed) || parsed < min || parsed > max) {
      problems.push(`${name}: must be a number from ${min} to ${max}`);
      return fallback;
    }
    return parsed;
  };
  const sampler = samplerSetting(
    value('OTEL_TRACES_SAMPLER'),
    () => number('OTEL_TRACES_SAMPLER_ARG', 1, 0, 1),
    problems,
  );
  const batch = {
    scheduledDelayMillis: number('OTEL_BSP_SCHEDULE_DELAY', 5_000, 0),
    maxQueueSize: number('OTEL_BSP_MAX_QUEUE_SIZE', 2_048, 1),
    maxExportBatchSize: number('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, 1),
    exportTimeoutMillis: number('OTEL_BSP_EXPORT_TIMEOUT', 30_000, 1),
  };
  if (problems.length > 0) throw new TracingSettingsError(`Invalid tracing settings:\n  ${problems.join('\n  ')}`);
  return { enabled: true, serviceName: value('OTEL_SERVICE_NAME') ?? defaultServiceName, sampler, batch };
}

function samplerSetting(name: string | undefined, ratio: () => number, problems: string[]): SamplerSetting {
  const kind = (name ?? 'parentbased_always_on').toLowerCase();
  if (!(SAMPLERS as readonly string[]).includes(kind)) {
    problems.push(`OTEL_TRACES_SAMPLER: one of ${SAMPLERS.join(', ')}`);
    return { kind: 'parentbased_always_on' };
  }
  if (kind === 'traceidratio' || kind === 'parentbased_traceidratio') return { kind, ratio: ratio() };
  return { kind: kind as Exclude<SamplerSetting['kind'], 'traceidratio' | 'parentbased_traceidratio'> };
}
