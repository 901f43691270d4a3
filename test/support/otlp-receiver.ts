import path from 'node:path';
import { type GrpcObject, loadPackageDefinition, Server, ServerCredentials, type ServiceClientConstructor, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

/** One span as the receiver got it (ids in hex, attributes flattened). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind name (SPAN_KIND_SERVER, SPAN_KIND_CLIENT, ...). */
  kind: string;
  attributes: Record<string, string | number | boolean>;
  /** The attributes of the resource that sent it (service.name, ...). */
  resource: Record<string, string | number | boolean>;
}

interface AnyValue {
  value?: 'stringValue' | 'intValue' | 'boolValue' | 'doubleValue';
  stringValue?: string;
  intValue?: string;
  boolValue?: boolean;
  doubleValue?: number;
}
interface KeyValue {
  key: string;
  value?: AnyValue;
}
interface WireSpan {
  traceId: Buffer;
  spanId: Buffer;
  parentSpanId: Buffer;
  name: string;
  kind: string;
  attributes: KeyValue[];
}
interface ExportRequest {
  resourceSpans: { resource?: { attributes: KeyValue[] }; scopeSpans: { spans: WireSpan[] }[] }[];
}

function flatten(attrs: KeyValue[] = []): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attrs) {
    if (!value?.value) continue;
    const v = value[value.value];
    if (v !== undefined) out[key] = value.value === 'intValue' ? Number(v) : (v as string | number | boolean);
  }
  return out;
}

/**
 * A real OTLP/gRPC trace receiver for tests: the collector's
 * TraceService/Export on a loopback port, decoding requests with the
 * official OTLP protobuf definitions (test/fixtures/otlp, opentelemetry-proto
 * v1.11.0). Keeps every span it received, in order.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Starts on a free loopback port (plain gRPC, as kube-apiserver's exporter speaks). */
  static async start(): Promise<OtlpReceiver> {
    const definition = loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto', {
      includeDirs: [path.join(process.cwd(), 'test/fixtures/otlp')],
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    const pkg = loadPackageDefinition(definition) as unknown as {
      opentelemetry: { proto: { collector: { trace: { v1: GrpcObject & { TraceService: ServiceClientConstructor } } } } };
    };
    const server = new Server();
    let self: OtlpReceiver | undefined;
    server.addService(pkg.opentelemetry.proto.collector.trace.v1.TraceService.service, {
      Export: (call: ServerUnaryCall<ExportRequest, unknown>, done: sendUnaryData<unknown>) => {
        self?.receive(call.request);
        done(null, {});
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    self = new OtlpReceiver(server, port);
    return self;
  }

  /** `127.0.0.1:<port>`, a TracingConfiguration endpoint. */
  get endpoint(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** The spans of trace `traceId`. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  private receive(req: ExportRequest): void {
    for (const rs of req.resourceSpans) {
      const resource = flatten(rs.resource?.attributes);
      for (const ss of rs.scopeSpans) {
        for (const s of ss.spans) {
          this.spans.push({
            traceId: Buffer.from(s.traceId).toString('hex'),
            spanId: Buffer.from(s.spanId).toString('hex'),
            parentSpanId: Buffer.from(s.parentSpanId ?? []).toString('hex'),
            name: s.name,
            kind: s.kind,
            attributes: flatten(s.attributes),
            resource,
          });
        }
      }
    }
  }

  /** Stops at once. */
  async close(): Promise<void> {
    this.server.forceShutdown();
  }
}
