import { Server, ServerCredentials, type ServerUnaryCall, type sendUnaryData, type ServiceDefinition } from '@grpc/grpc-js';
import protobuf from 'protobufjs';

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

/**
 * The part of OTLP's trace protocol the receiver reads (opentelemetry-proto's
 * collector/trace/v1 and trace/v1 messages, by their field numbers); fields it
 * does not name are skipped by the decoder, as protobuf allows.
 */
const OTLP = protobuf.Root.fromJSON({
  nested: {
    otlp: {
      nested: {
        AnyValue: {
          oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue'] } },
          fields: { stringValue: { type: 'string', id: 1 }, boolValue: { type: 'bool', id: 2 }, intValue: { type: 'int64', id: 3 }, doubleValue: { type: 'double', id: 4 } },
        },
        KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
        Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
        SpanKind: { values: { SPAN_KIND_UNSPECIFIED: 0, SPAN_KIND_INTERNAL: 1, SPAN_KIND_SERVER: 2, SPAN_KIND_CLIENT: 3, SPAN_KIND_PRODUCER: 4, SPAN_KIND_CONSUMER: 5 } },
        Span: {
          fields: {
            traceId: { type: 'bytes', id: 1 },
            spanId: { type: 'bytes', id: 2 },
            parentSpanId: { type: 'bytes', id: 4 },
            name: { type: 'string', id: 5 },
            kind: { type: 'SpanKind', id: 6 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 9 },
          },
        },
        ScopeSpans: { fields: { spans: { rule: 'repeated', type: 'Span', id: 2 } } },
        ResourceSpans: { fields: { resource: { type: 'Resource', id: 1 }, scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 } } },
        ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } } },
      },
    },
  },
});
const EXPORT_REQUEST = OTLP.lookupType('otlp.ExportTraceServiceRequest');

/** The collector's TraceService: one unary Export call (an empty ExportTraceServiceResponse answers it). */
const TRACE_SERVICE: ServiceDefinition = {
  Export: {
    path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
    requestStream: false,
    responseStream: false,
    requestSerialize: () => Buffer.alloc(0),
    requestDeserialize: (bytes: Buffer) =>
      EXPORT_REQUEST.toObject(EXPORT_REQUEST.decode(bytes), { longs: String, enums: String, defaults: true, oneofs: true }) as ExportRequest,
    responseSerialize: () => Buffer.alloc(0),
    responseDeserialize: () => ({}),
  },
};

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
 * TraceService/Export on a loopback port, decoding requests by OTLP's
 * field numbers with protobufjs (the messages above). Keeps every span it
 * received, in order.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Starts on a free loopback port (plain gRPC, as kube-apiserver's exporter speaks). */
  static async start(): Promise<OtlpReceiver> {
    const server = new Server();
    let self: OtlpReceiver | undefined;
    server.addService(TRACE_SERVICE, {
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
