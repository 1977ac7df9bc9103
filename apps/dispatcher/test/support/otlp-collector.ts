import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as a collector received it, flattened: ids in hex, attributes as plain values. */
export interface CollectedSpan {
  service: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  links?: { traceId: string; spanId: string }[];
}
interface OtlpExport {
  resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

/**
 * A tiny OTLP/HTTP trace collector on 127.0.0.1 (JSON bodies at POST /v1/traces), keeping every
 * span it is sent, for tests that run traced processes. `url` is what OTEL_EXPORTER_OTLP_ENDPOINT takes.
 */
export class OtlpCollector {
  readonly spans: CollectedSpan[] = [];
  /** Request bodies exactly as received, to search for what must never be exported. */
  readonly rawBodies: string[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<OtlpCollector> {
    const server = http.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const collector = new OtlpCollector(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        const body = Buffer.concat(chunks).toString('utf8');
        collector.rawBodies.push(body);
        collector.spans.push(...flatten(JSON.parse(body) as OtlpExport));
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      });
    });
    return collector;
  }

  ofService(service: string): CollectedSpan[] {
    return this.spans.filter((span) => span.service === service);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function flatten(payload: OtlpExport): CollectedSpan[] {
  return (payload.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        service: String(resource['service.name']),
        name: span.name,
        kind: span.kind,
        traceId: hexId(span.traceId),
        spanId: hexId(span.spanId),
        parentSpanId: span.parentSpanId ? hexId(span.parentSpanId) : '',
        attributes: attributesOf(span.attributes),
        links: (span.links ?? []).map((link) => ({ traceId: hexId(link.traceId), spanId: hexId(link.spanId) })),
      })),
    );
  });
}

function attributesOf(attributes: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries(
    (attributes ?? []).map(({ key, value }) => [
      key,
      value.stringValue ??
        (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
        value.doubleValue ??
        value.boolValue,
    ]),
  );
}

/** OTLP/JSON carries ids as hex; base64 is accepted too, as some exporters send it. */
function hexId(id: string): string {
  return /^[0-9a-f]+$/i.test(id) && (id.length === 32 || id.length === 16)
    ? id.toLowerCase()
    : Buffer.from(id, 'base64').toString('hex');
}
