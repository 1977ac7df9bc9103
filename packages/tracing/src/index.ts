export { startTracing, startProcessTracing, type StartTracingOptions, type Tracing } from './start-tracing';
export { tracingSettings, TracingSettingsError, type TracingSettings } from './tracing-settings';
export {
  currentTraceContext,
  inSpan,
  startSpan,
  tracingActive,
  type SpanAttributes,
  type SpanHandle,
  type SpanOptions,
  type TraceContext,
} from './active-tracing';
