import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { type Context, type Span, SpanStatusCode } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Observable } from 'rxjs';
import type { RequestPhaseTracer } from '../authn/request-authentication.hook.js';
import { type RequestInfo, requestInfoOf } from '../http/request-info.js';
import type { SpanAttributes, Tracing } from '../observability/tracing.js';

/** A request's trace: its span, the context its children start in, and its tenant's attributes. */
interface RequestTrace {
  span: Span;
  context: Context;
  placement: SpanAttributes;
}

/** Traces by request (the raw IncomingMessage: the same object for Fastify's hooks and Nest's interceptors). */
const traces = new WeakMap<object, RequestTrace>();

/**
 * Upstream's span name for a request (WithTracing's formatter): the method
 * and the path's pattern (`POST /api/v1/namespaces/{:namespace}/configmaps`),
 * `/clusters/{:tenant}` in front under a tenant's prefix; the method alone
 * for a path that names no resource.
 */
export function requestSpanName(method: string, url: string, info: RequestInfo): string {
  if (!info.isResourceRequest) return method;
  let name = url.startsWith('/clusters/') ? '/clusters/{:tenant}' : '';
  name += `/${info.prefix}`;
  if (info.group) name += `/${info.group}`;
  name += `/${info.version}`;
  if (info.namespace) name += '/namespaces/{:namespace}';
  name += `/${info.resource}`;
  if (info.name) name += '/{:name}';
  if (info.subresource) name += `/${info.subresource}`;
  return `${method} ${name}`;
}

/**
 * Starts a request's span before any other hook (so authentication,
 * authorization, queueing and the handler are inside it), continuing the
 * trace of an incoming `traceparent`, with HTTP attributes as upstream's
 * (otelhttp's) and the tenant and its shard; ends it when the response is
 * done or the connection goes (its status code, and the audit ID when
 * auditing). Install first.
 */
export function installRequestTracing(fastify: FastifyInstance, tracing: Tracing): void {
  fastify.addHook('onRequest', async (req, reply) => {
    const info = requestInfoOf(req);
    const path = req.url.split('?', 1)[0];
    const placement = tracing.placement(info.tenant);
    const attributes: SpanAttributes = {
      ...placement,
      'http.request.method': req.method,
      'url.path': path,
      'http.target': req.url,
      'url.scheme': 'https',
      'network.protocol.version': req.raw.httpVersion,
      'client.address': req.ip,
    };
    const agent = req.headers['user-agent'];
    if (agent) attributes['user_agent.original'] = agent;
    const { span, context } = tracing.startRequest(requestSpanName(req.method, path, info), req.headers, attributes);
    traces.set(req.raw, { span, context, placement });
    reply.raw.once('close', () => {
      const code = reply.raw.statusCode;
      span.setAttribute('http.response.status_code', code);
      const auditId = (req as unknown as { audit?: { id?: string } }).audit?.id;
      if (auditId) span.setAttribute('audit-id', auditId);
      if (code >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
  });
}

/** Spans for the request hook's phases (Authenticate, Authorize), children of the request's span. */
export function requestPhaseTracer(tracing: Tracing): RequestPhaseTracer {
  return {
    phase: (req, name, run, describe) => {
      const t = traces.get(req.raw);
      if (!t) return run();
      return tracing.within(
        name,
        t.placement,
        async (span) => {
          const result = await run();
          if (span && describe) for (const [k, v] of Object.entries(describe(result))) span.setAttribute(k, v);
          return result;
        },
        undefined,
        t.context,
      );
    },
  };
}

/**
 * Runs the handler of every sampled request inside its trace context, so
 * that what it calls (admission, webhooks, storage) starts its spans under
 * the request's. Registered only when tracing is on.
 */
export class RequestTracingInterceptor implements NestInterceptor {
  constructor(private readonly tracing: Tracing) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = ctx.switchToHttp().getRequest<FastifyRequest>();
    const t = req?.raw ? traces.get(req.raw) : undefined;
    // Only a sampled request's handler runs in its context: on Node 20 an AsyncLocalStorage in use puts a hook on
    // every promise of the process, a cost that unsampled requests (sampling rate 0) do not pay.
    return t?.span.isRecording() ? this.tracing.run(t.context, () => next.handle()) : next.handle();
  }
}
