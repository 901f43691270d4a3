import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { AUDIT_LOG, type AuditLog } from '../audit/audit-log.js';
import { installAudit } from '../audit/audit.hook.js';
import { AuthenticationService } from '../authn/authentication.service.js';
import { installRequestAuthentication } from '../authn/request-authentication.hook.js';
import { RequestAuthorizer } from '../authz/authorizer-chain.js';
import { FairQueuing } from '../flowcontrol/fair-queuing.js';
import { installFlowControl } from '../flowcontrol/flow-control.hook.js';
import { ThrottledWrites } from '../flowcontrol/throttled-writes.js';
import { WorkEstimator } from '../flowcontrol/work-estimator.js';
import { GracefulShutdown } from '../lifecycle/graceful-shutdown.js';
import { LOGGER } from '../observability/logger.js';
import { Metrics } from '../observability/metrics.js';
import { MAX_BODY_BYTES, MAX_SNAPSHOT_BYTES, SNAPSHOT_MEDIA_TYPE } from '../http/http-limits.js';
import { registerRequestGuards } from '../http/request-guards.js';
import { registerStreamedBodies } from '../http/streamed-body.js';
import { registerRequestTimeout } from '../http/request-timeout.js';
import { registerCborServing } from '../http/cbor-serving.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { TRACING, type Tracing } from '../observability/tracing.js';
import { installRequestTracing, requestPhaseTracer } from './request-tracing.js';

/**
 * What every request passes before a controller, as kube-apiserver's
 * handler chain, installed on the Fastify instance when the module starts
 * (routes take their hooks when Fastify becomes ready): the request
 * deadline (504 past PLINTH_REQUEST_TIMEOUT_SECONDS), request guards,
 * refusal while draining, raw bodies up to 3 MiB (decoded by the
 * handlers; HTTP/2 bodies of unknown length included), audit, authentication and authorization, fair queuing, and
 * request metrics and logs; with tracing on, a span per request first of all (request-tracing.ts).
 */
@Injectable()
export class RequestPipeline implements OnModuleInit {
  constructor(
    @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
    @Inject(GracefulShutdown) private readonly shutdown: GracefulShutdown,
    @Inject(AUDIT_LOG) private readonly audit: AuditLog | null,
    @Inject(AuthenticationService) private readonly authn: AuthenticationService,
    @Inject(RequestAuthorizer) private readonly authorizer: RequestAuthorizer,
    @Inject(FairQueuing) private readonly flow: FairQueuing,
    @Inject(WorkEstimator) private readonly work: WorkEstimator,
    @Inject(ThrottledWrites) private readonly throttled: ThrottledWrites,
    @Inject(Metrics) private readonly metrics: Metrics,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(TRACING) private readonly tracing: Tracing | null,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.removeAllContentTypeParsers();
    // First of all, so that the request's span holds every other step.
    if (this.tracing) installRequestTracing(fastify, this.tracing);
    // Before every other hook, so their error answers may be CBOR too.
    registerCborServing(fastify, this.config.featureGates.enabled('CBORServingAndStorage'));
    // First, so a request's deadline counts from its arrival, body upload and queueing included.
    registerRequestTimeout(fastify, this.config.requestTimeoutSeconds * 1000);
    registerRequestGuards(fastify);
    this.shutdown.register(fastify);
    fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (_req, body, done) => done(null, body));
    // A tenant snapshot restored (POST tenants/{name}/snapshot) is read whole, up to its own limit.
    fastify.addContentTypeParser(SNAPSHOT_MEDIA_TYPE, { parseAs: 'buffer', bodyLimit: MAX_SNAPSHOT_BYTES }, (_req, body, done) => done(null, body));
    registerStreamedBodies(fastify);
    fastify.addHook('onRequest', async (req) => {
      (req as unknown as { startedAt: bigint }).startedAt = process.hrtime.bigint();
    });
    if (this.audit) installAudit(fastify, this.audit.policy, this.audit.writer);
    installRequestAuthentication(fastify, this.authn, this.authorizer, this.logger, this.metrics, this.tracing ? requestPhaseTracer(this.tracing) : undefined);
    installFlowControl(fastify, this.flow, this.work, this.throttled);
    this.forceContentTypes(fastify);
    this.recordRequests(fastify);
  }

  /**
   * Fastify replaces Content-Types it cannot parse (the gnostic protobuf
   * type has an '@'); handlers that need one anyway set it here, after
   * Fastify's defaulting.
   */
  private forceContentTypes(fastify: FastifyInstance): void {
    fastify.addHook('onSend', async (_req, reply, payload) => {
      const forced = (reply as unknown as { forcedContentType?: string }).forcedContentType;
      if (forced) reply.header('content-type', forced);
      return payload;
    });
  }

  /** Request counts and latency by verb and resource (labels bounded: made-up paths share one), and a debug log line. */
  private recordRequests(fastify: FastifyInstance): void {
    fastify.addHook('onResponse', async (req, reply) => {
      const labels = req.plinth ?? { verb: req.method.toLowerCase(), group: '', resource: '' };
      const started = (req as unknown as { startedAt?: bigint }).startedAt ?? process.hrtime.bigint();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      this.metrics.requests.inc({ ...labels, code: String(reply.statusCode) });
      this.metrics.latency.observe(labels, seconds);
      this.logger.debug({ method: req.method, url: req.url, code: reply.statusCode, ms: Math.round(seconds * 1000) }, 'request');
    });
  }
}
