import type { IncomingMessage, RequestOptions } from 'node:http';
import {
  DiagConsoleLogger,
  DiagLogLevel,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  diag,
  propagation,
  trace,
  type Link,
  type TextMapPropagator,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { detectResources, envDetector, hostDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_URL_FULL, ATTR_URL_PATH, ATTR_URL_QUERY } from '@opentelemetry/semantic-conventions';
import type { ActiveTracing, SpanHandle, SpanOptions, TraceContext } from './active-tracing';
import type { SamplerSetting, TracingSettings } from './tracing-settings';

// Loaded by startTracing only when tracing is on: with it off, none of these modules is loaded.

/** Routes every replica answers all day (probes, scrapes): a trace each would drown the rest. */
const UNTRACED_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

const KINDS = { internal: SpanKind.INTERNAL, producer: SpanKind.PRODUCER, consumer: SpanKind.CONSUMER };

export interface SdkOptions {
  /**
   * How a request target may be shown (the API's log redaction: tokens in paths, query values).
   * Incoming requests' url.path and url.query are recorded through it; without it, the path
   * only and no query.
   */
  redactTarget?: (target: string) => string;
  /**
   * Start every incoming request's trace afresh, ignoring the `traceparent` and `tracestate` it
   * brings. For a process that serves the public: a client's header would otherwise choose its
   * trace id and whether it is sampled (forcing every request traced, or none), and its
   * `tracestate` would be stored with the events and sent to tenants' receivers.
   */
  ignoreIncomingContext?: boolean;
}

export interface Sdk {
  tracing: ActiveTracing;
  shutdown(): Promise<void>;
}

/**
 * Registers OpenTelemetry for this process: W3C trace context, AsyncLocalStorage context, an
 * OTLP/HTTP exporter behind a batch processor, and the instrumentations of http (server and
 * client), Express, pg (Prisma's driver adapter and the raw pools both go through it) and ioredis
 * (BullMQ included). Must run before those modules are loaded.
 */
export function startSdk(settings: Extract<TracingSettings, { enabled: true }>, options: SdkOptions): Sdk {
  diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.WARN);
  const propagator = new W3CTraceContextPropagator();
  propagation.setGlobalPropagator(options.ignoreIncomingContext ? injectOnly(propagator) : propagator);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

  const resource = detectResources({ detectors: [envDetector, hostDetector] }).merge(
    resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }),
  );
  const provider = new TracerProvider({
    resource,
    sampler: sampler(settings.sampler),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), ...settings.batch })],
  });
  trace.setGlobalTracerProvider(provider);

  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => UNTRACED_ROUTES.has(pathOf(request.url ?? '/')),
        startIncomingSpanHook: (request) => incomingUrlAttributes(request, options.redactTarget),
        // Outgoing requests (webhook receivers, Stripe) record the origin only: a receiver's URL
        // may carry a credential in its path or query. Only those made inside a span are traced.
        startOutgoingSpanHook: (request) => ({ [ATTR_URL_FULL]: originOf(request) }),
        requireParentforOutgoingSpans: true,
      }),
      // A span per route handler; the middleware layers (body parsing, auth, rate limits) run
      // inside the request's span without one each.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER] }),
      // Statement text is recorded (it has placeholders, never values); the relay's idle polls
      // and other queries outside a request or job make no trace of their own.
      new PgInstrumentation({ requireParentSpan: true }),
      // The command name only: arguments hold hold ids, idempotency records and job data.
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ],
  });

  const tracer = provider.getTracer('@booking/tracing');
  const contextOf = (carried: TraceContext) =>
    propagator.extract(
      ROOT_CONTEXT,
      carried.tracestate === null
        ? { traceparent: carried.traceparent }
        : { traceparent: carried.traceparent, tracestate: carried.tracestate },
      defaultTextMapGetter,
    );

  const tracing: ActiveTracing = {
    currentContext() {
      const carrier: Record<string, string> = {};
      propagator.inject(context.active(), carrier, defaultTextMapSetter);
      return carrier.traceparent ? { traceparent: carrier.traceparent, tracestate: carrier.tracestate ?? null } : null;
    },
    startSpan(name: string, spanOptions: SpanOptions): SpanHandle {
      const parent = spanOptions.parent ? contextOf(spanOptions.parent) : context.active();
      const links: Link[] = [];
      for (const carried of spanOptions.links ?? []) {
        const linked = carried && trace.getSpanContext(contextOf(carried));
        if (linked) links.push({ context: linked });
      }
      const span = tracer.startSpan(
        name,
        {
          kind: KINDS[spanOptions.kind ?? 'internal'],
          attributes: spanOptions.attributes,
          links,
          startTime: spanOptions.startTime,
        },
        parent,
      );
      const active = trace.setSpan(parent, span);
      return {
        setAttributes: (attributes) => span.setAttributes(attributes),
        run: (work) => context.with(active, work),
        end(error?: unknown) {
          if (error !== undefined) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
            span.setAttribute('error.type', error instanceof Error ? error.name : typeof error);
          }
          span.end();
        },
      };
    },
  };

  return {
    tracing,
    async shutdown() {
      unregister();
      // Exports what the batch still holds, within OTEL_BSP_EXPORT_TIMEOUT.
      await provider.shutdown();
    },
  };
}

function sampler(setting: SamplerSetting): Sampler {
  switch (setting.kind) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(setting.ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(setting.ratio) });
  }
}

function pathOf(target: string): string {
  const end = target.search(/[?#]/);
  return end === -1 ? target : target.slice(0, end);
}

/**
 * url.path and url.query of an incoming request as the redaction shows them. They replace the
 * instrumentation's raw values; url.query is set only when the request has a query (only then
 * is there a raw one to replace).
 */
function incomingUrlAttributes(request: IncomingMessage, redact: ((target: string) => string) | undefined) {
  const target = request.url ?? '/';
  const hasQuery = /[?#]/.test(target);
  const shown = redact ? redact(target) : pathOf(target);
  const queryAt = shown.indexOf('?');
  const path = queryAt === -1 ? shown : shown.slice(0, queryAt);
  if (!hasQuery) return { [ATTR_URL_PATH]: path };
  return { [ATTR_URL_PATH]: path, [ATTR_URL_QUERY]: queryAt === -1 ? '' : shown.slice(queryAt + 1) };
}

function originOf(request: RequestOptions): string {
  const protocol = request.protocol ?? 'http:';
  const host = request.hostname ?? request.host ?? 'localhost';
  return request.port ? `${protocol}//${host}:${request.port}` : `${protocol}//${host}`;
}

/**
 * `propagator` for outgoing requests only: what the http instrumentation extracts from an incoming
 * request is the context it already had, so the request's span is a root, sampled by the root
 * sampler.
 */
function injectOnly(propagator: TextMapPropagator): TextMapPropagator {
  return {
    inject: (active, carrier, setter) => propagator.inject(active, carrier, setter),
    extract: (active) => active,
    fields: () => propagator.fields(),
  };
}
