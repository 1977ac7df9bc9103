import { setActiveTracing } from './active-tracing';
import type { SdkOptions } from './tracing-sdk';
import { TracingSettingsError, tracingSettings } from './tracing-settings';

export interface Tracing {
  enabled: boolean;
  /** Exports the spans not yet sent and stops tracing; call it last in a graceful shutdown. */
  shutdown(): Promise<void>;
}

const TRACING_OFF: Tracing = { enabled: false, shutdown: async () => undefined };

export interface StartTracingOptions extends SdkOptions {
  /** `service.name` of this process's spans unless OTEL_SERVICE_NAME names another. */
  serviceName: string;
  /** Default `process.env`. */
  env?: Record<string, string | undefined>;
}

/**
 * Starts tracing when the environment asks for it (tracingSettings), else does nothing at all:
 * the OpenTelemetry SDK and its instrumentations are loaded only when tracing is on. A process
 * calls it before it loads anything it wants traced (http, express, pg, ioredis), so each
 * `main.ts` imports its tracing module first.
 */
export function startTracing(options: StartTracingOptions): Tracing {
  const settings = tracingSettings(options.env ?? process.env, options.serviceName);
  if (!settings.enabled) return TRACING_OFF;
  // A require, not an import: an import would load the SDK whether tracing is on or not.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startSdk } = require('./tracing-sdk') as typeof import('./tracing-sdk');
  const sdk = startSdk(settings, options);
  setActiveTracing(sdk.tracing);
  return {
    enabled: true,
    async shutdown() {
      setActiveTracing(null);
      await sdk.shutdown();
    },
  };
}

/** startTracing for a process's entry point: a bad OTEL_* setting ends the process with its message, as a bad config does. */
export function startProcessTracing(options: StartTracingOptions): Tracing {
  try {
    return startTracing(options);
  } catch (error) {
    if (!(error instanceof TracingSettingsError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
}
