/**
 * W3C trace context as it travels in an outbox row: `traceparent`
 * (`00-<trace id>-<span id>-<flags>`) and `tracestate` when the trace carries one.
 */
export interface TraceContext {
  traceparent: string;
  tracestate: string | null;
}

export type SpanAttributes = Record<string, string | number | boolean>;

export interface SpanOptions {
  /** How the span relates to its peers: `consumer` for work taken from a queue, `producer` for work put on one. */
  kind?: 'internal' | 'producer' | 'consumer';
  attributes?: SpanAttributes;
  /** A context from elsewhere (an outbox row) that this span continues as a child, in its trace. */
  parent?: TraceContext | null;
  /** Contexts this span links to without joining their traces (a batch of events). */
  links?: readonly (TraceContext | null)[];
  /** When the work began, in epoch milliseconds, if before the span is started; default now. */
  startTime?: number;
}

export interface SpanHandle {
  setAttributes(attributes: SpanAttributes): void;
  /** Runs `work` with this span active, so spans started inside it (queries, requests) are its children. */
  run<T>(work: () => T): T;
  /** Ends the span; an error marks it failed and is recorded on it. */
  end(error?: unknown): void;
}

/** What a started SDK provides; `null` while tracing is off. */
export interface ActiveTracing {
  currentContext(): TraceContext | null;
  startSpan(name: string, options: SpanOptions): SpanHandle;
}

let active: ActiveTracing | null = null;

/** Set once by startTracing when tracing is on; tests of the SDK clear it again. */
export function setActiveTracing(tracing: ActiveTracing | null): void {
  active = tracing;
}

const NO_SPAN: SpanHandle = {
  setAttributes: () => undefined,
  run: (work) => work(),
  end: () => undefined,
};

/** Whether spans are recorded in this process. */
export function tracingActive(): boolean {
  return active !== null;
}

/**
 * The trace context of the request or job running now, to store with what it records; null when
 * tracing is off or nothing is traced here. Off, this is one comparison: it sits on the booking
 * hot path (every outbox row).
 */
export function currentTraceContext(): TraceContext | null {
  return active === null ? null : active.currentContext();
}

/** Starts a span; off, a shared handle that does nothing (one comparison, no allocation). */
export function startSpan(name: string, options: SpanOptions = {}): SpanHandle {
  return active === null ? NO_SPAN : active.startSpan(name, options);
}

/** Runs `work` inside a span that ends when it settles, failed if it throws. */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: SpanHandle) => Promise<T>,
): Promise<T> {
  if (active === null) return work(NO_SPAN);
  const span = active.startSpan(name, options);
  try {
    const result = await span.run(() => work(span));
    span.end();
    return result;
  } catch (error) {
    span.end(error);
    throw error;
  }
}
