import { AsyncLocalStorage } from 'node:async_hooks';
import { hostname } from 'node:os';
import { credentials } from '@grpc/grpc-js';
import { type Attributes, type Context, defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';

/** What {@link Tracing} is built from (a validated TracingConfiguration, and where tenants live). */
export interface TracingOptions {
  /** The OTLP gRPC exporter's URL: `http://host:port` (plain gRPC) or `unix:///path`. */
  url: string;
  /** Root requests sampled per million (0: only those whose incoming context is sampled). */
  samplingRatePerMillion: number;
  /** The shard `tenant` lives on as this replica knows it without a read; undefined when it does not. */
  shardOf: (tenant: string) => string | undefined;
}

/** Span attribute values (OpenTelemetry's primitive ones). */
export type SpanAttributes = Record<string, string | number | boolean>;

/** A span a caller may annotate, and the headers that carry its context onwards. */
export interface TracedSpan {
  setAttribute(key: string, value: string | number | boolean): void;
  /** `traceparent` (and `tracestate`) of this span, for a server it calls; empty when the span is not valid. */
  propagationHeaders(): Record<string, string>;
}

/** A write's span context remembered until its change reaches the watch cache (so the fan-out joins the write's trace). */
const REMEMBERED_WRITES = 4096;

const SERVICE_NAME = 'apiserver';

/**
 * OpenTelemetry tracing of one server (upstream's APIServerTracing): an
 * OTLP gRPC exporter in batches, sampled ParentBased(TraceIDRatioBased) as
 * upstream, W3C trace context read from requests and sent to webhooks.
 * Contexts are explicit (no global provider or context manager is
 * installed, so several servers may share a process): the request's is
 * kept per request, and the handler runs inside it ({@link run}), where the
 * admission and storage hooks find it. Steps below a request (admission,
 * webhook calls, storage) are recorded only under a recording request span;
 * the watch fan-out of a change joins the trace of the write that made it
 * when this replica served that write, else starts its own (sampled as a
 * request is). Every span carries `tenant` and `shard`. Built only when
 * PLINTH_TRACING_CONFIG_FILE is set: without it nothing of this runs.
 */
export class Tracing {
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;
  private readonly propagator = new W3CTraceContextPropagator();
  private readonly active = new AsyncLocalStorage<Context>();
  /** Writes in progress or done, by object: the context of the write's span, and its revision once known. */
  private readonly writes = new Map<string, { context: Context; revision?: number }>();

  constructor(private readonly options: TracingOptions) {
    const ratio = options.samplingRatePerMillion / 1_000_000;
    const exporter = new OTLPTraceExporter({ url: options.url, ...(options.url.startsWith('unix') ? { credentials: credentials.createInsecure() } : {}) });
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': SERVICE_NAME, 'service.instance.id': `${hostname()}-${process.pid}` }),
      sampler: new ParentBasedSampler({ root: ratio > 0 ? new TraceIdRatioBasedSampler(ratio) : new AlwaysOffSampler() }),
      spanProcessors: [new BatchSpanProcessor(exporter)],
    });
    this.tracer = this.provider.getTracer('plinth');
  }

  /** `tenant` and its shard (when known), the attributes every span carries. */
  placement(tenant: string): SpanAttributes {
    const shard = this.options.shardOf(tenant);
    return shard === undefined ? { tenant } : { tenant, shard };
  }

  /**
   * Starts the span of a request whose headers are `headers`, continuing the
   * trace of its `traceparent` (ParentBased sampling: a sampled parent is
   * sampled). Returns the span and the context its children start in.
   */
  startRequest(name: string, headers: Record<string, string | string[] | undefined>, attributes: SpanAttributes): { span: Span; context: Context } {
    const parent = this.propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    const span = this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
    return { span, context: trace.setSpan(parent, span) };
  }

  /** Runs `fn` with `context` as the active one (what the admission and storage hooks start their spans under). */
  run<T>(context: Context, fn: () => T): T {
    return this.active.run(context, fn);
  }

  /**
   * Runs `fn` as the span `name` under `parent` (or the active context),
   * active inside it; ends it when `fn` settles (a rejection marks it
   * failed). When there is no recording parent no span is made and `fn`
   * gets undefined (or, under a valid unsampled parent, a handle that only
   * propagates it). `kind`: CLIENT for calls out (webhooks, storage).
   */
  async within<T>(name: string, attributes: SpanAttributes, fn: (span: TracedSpan | undefined) => Promise<T>, kind: SpanKind = SpanKind.INTERNAL, parent?: Context): Promise<T> {
    const ctx = parent ?? this.active.getStore();
    const parentSpan = ctx && trace.getSpan(ctx);
    if (!ctx || !parentSpan) return fn(undefined);
    if (!parentSpan.isRecording()) return fn(parentSpan.spanContext().traceFlags !== undefined ? this.handle(parentSpan, ctx) : undefined);
    const span = this.tracer.startSpan(name, { kind, attributes }, ctx);
    const inner = trace.setSpan(ctx, span);
    try {
      return await this.active.run(inner, () => fn(this.handle(span, inner)));
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  }

  private handle(span: Span, ctx: Context): TracedSpan {
    return {
      setAttribute: (k, v) => span.setAttribute(k, v),
      propagationHeaders: () => {
        const carrier: Record<string, string> = {};
        this.propagator.inject(ctx, carrier, defaultTextMapSetter);
        return carrier;
      },
    };
  }

  /**
   * The storage hook (@plinth/storage's StorageTracer): one CLIENT span per
   * operation under the active request, `storage.<operation>`, with the
   * PostgreSQL attributes; remembers each write's context by its object
   * (from before the write: its change may reach the watch cache before the
   * write's caller resumes) for the fan-out of its change.
   */
  storageOperation<T>(operation: string, key: { tenant: string; resource: string; namespace?: string; name?: string }, run: (span: TracedSpan | undefined) => Promise<T>): Promise<T> {
    if (!this.active.getStore()) return run(undefined);
    const attributes: SpanAttributes = { ...this.placement(key.tenant), 'db.system.name': 'postgresql', 'db.operation.name': operation, resource: key.resource };
    if (key.namespace) attributes.namespace = key.namespace;
    if (key.name) attributes.name = key.name;
    return this.within(
      `storage.${operation}`,
      attributes,
      async (span) => {
        const write = span && operation !== 'get' && operation !== 'list' ? this.remember(key) : undefined;
        try {
          const result = await run(span);
          const revision = (result as { revision?: unknown } | undefined)?.revision;
          if (write && typeof revision === 'number') write.revision = revision;
          return result;
        } catch (err) {
          if (write) this.forget(key, write);
          throw err;
        }
      },
      SpanKind.CLIENT,
    );
  }

  /** The admission hook (@plinth/admission's AdmissionTracer): one span per step under the active request; webhook calls are CLIENT spans. */
  admissionStep<T>(name: string, attributes: SpanAttributes, run: (span: TracedSpan | undefined) => Promise<T>): Promise<T> {
    if (!this.active.getStore()) return run(undefined);
    const tenant = typeof attributes.tenant === 'string' ? attributes.tenant : undefined;
    const all = tenant === undefined ? attributes : { ...attributes, ...this.placement(tenant) };
    return this.within(name, all, run, name.startsWith('Call ') ? SpanKind.CLIENT : SpanKind.INTERNAL);
  }

  private static writeKey(key: { tenant: string; resource: string; namespace?: string; name?: string }): string {
    return `${key.tenant}\u0000${key.resource}\u0000${key.namespace ?? ''}\u0000${key.name ?? ''}`;
  }

  /** Remembers the active context as that of a write of `key` (the latest write of an object wins). */
  private remember(key: { tenant: string; resource: string; namespace?: string; name?: string }): { context: Context; revision?: number } | undefined {
    const context = this.active.getStore();
    if (!context) return undefined;
    const id = Tracing.writeKey(key);
    this.writes.delete(id);
    if (this.writes.size >= REMEMBERED_WRITES) this.writes.delete(this.writes.keys().next().value!);
    const write = { context };
    this.writes.set(id, write);
    return write;
  }

  private forget(key: { tenant: string; resource: string; namespace?: string; name?: string }, write: object): void {
    const id = Tracing.writeKey(key);
    if (this.writes.get(id) === write) this.writes.delete(id);
  }

  /**
   * Records the delivery of one change to `watchers` watchers
   * (`cacher.dispatchEvent`, from `startedAt`, a performance.now() time, to
   * now), in the trace of the write that made it when this replica served
   * that write, else as a root sampled as a request is.
   */
  fanOut(change: { revision: number; type: string; key: { tenant: string; resource: string; namespace: string; name: string } }, watchers: number, startedAt: number): void {
    const { key } = change;
    // The write of this object in progress (its revision not known yet), or the one that made this revision.
    const id = Tracing.writeKey(key);
    const write = this.writes.get(id);
    const joins = write !== undefined && (write.revision === undefined || write.revision === change.revision);
    if (joins) this.writes.delete(id);
    const parent = joins ? write.context : ROOT_CONTEXT;
    const attributes: SpanAttributes = { ...this.placement(key.tenant), resource: key.resource, name: key.name, type: change.type, revision: change.revision, watchers };
    if (key.namespace) attributes.namespace = key.namespace;
    const span = this.tracer.startSpan('cacher.dispatchEvent', { kind: SpanKind.INTERNAL, attributes, startTime: performance.timeOrigin + startedAt }, parent);
    span.end();
  }

  /** Exports what is buffered and stops (server shutdown). Never rejects. */
  async shutdown(): Promise<void> {
    await this.provider.shutdown().catch(() => undefined);
  }
}

/** Injection token of the server's {@link Tracing}, null when PLINTH_TRACING_CONFIG_FILE is unset. */
export const TRACING = Symbol('TRACING');
