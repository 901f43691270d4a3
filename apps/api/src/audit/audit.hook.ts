import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { UserInfo } from '@plinth/admission';
import { requestInfoOf } from '../http/request-info.js';
import type { AuditLogWriter } from './audit-log.writer.js';
import type { AuditAttributes, AuditDecision, AuditPolicy, AuditStage } from './audit-policy.js';
import { sourceIps } from './source-ips.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's audit record while it is served (unset when auditing is off). */
    audit?: AuditRecord;
    /** A watch calls it once its stream has started (the ResponseStarted stage). */
    auditResponseStarted?: () => void;
    /** Annotations admission added (admission policies' auditAnnotations and Audit actions). */
    auditAnnotations?: Record<string, string>;
    /** The authorizer's answer (audit annotations), set by the authentication hook. */
    authorizationDecision?: { allowed: boolean; reason?: string };
  }
}

/** What the audit hooks keep per request. */
interface AuditRecord {
  id: string;
  receivedAt: string;
  /**
   * Taken when the request arrives: an HTTP/2 stream's socket is gone by the
   * time its answer completes, and the address with it.
   */
  sourceIPs: string[];
  decision?: AuditDecision;
  /** The request's attributes, derived once (after authentication) and shared by every stage. */
  derived?: { attrs: AuditAttributes; tenant: string; version: string };
  responseBody?: unknown;
  done: boolean;
}

/** Request and response bodies larger than this are not copied into events. */
const MAX_BODY_BYTES = 1024 * 1024;
const VERBS: Record<string, string> = { GET: 'get', HEAD: 'get', POST: 'post', PUT: 'put', PATCH: 'patch', DELETE: 'delete' };

function attributesOf(req: FastifyRequest, user: UserInfo | undefined): { attrs: AuditAttributes; tenant: string; version: string } {
  const info = requestInfoOf(req);
  const resourceRequest = info.isResourceRequest && !!info.verb;
  return {
    tenant: info.tenant,
    version: info.version,
    attrs: {
      user: user?.username ?? '',
      groups: user?.groups ?? [],
      verb: resourceRequest ? info.verb : (VERBS[req.method] ?? req.method.toLowerCase()),
      resourceRequest,
      apiGroup: info.group,
      resource: info.resource,
      subresource: info.subresource,
      namespace: info.namespace,
      name: info.name,
      path: info.path,
    },
  };
}

function jsonOf(body: unknown): unknown {
  const text = Buffer.isBuffer(body) ? body.toString('utf8') : typeof body === 'string' ? body : undefined;
  if (text === undefined || text.length > MAX_BODY_BYTES) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function withoutManagedFields(o: unknown): unknown {
  if (!o || typeof o !== 'object' || !('metadata' in o)) return o;
  const copy = { ...(o as Record<string, unknown>) };
  const meta = { ...(copy.metadata as Record<string, unknown>) };
  delete meta.managedFields;
  copy.metadata = meta;
  return copy;
}

function userJson(u: UserInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { username: u.username };
  if (u.uid) out.uid = u.uid;
  out.groups = u.groups;
  if (u.extra && Object.keys(u.extra).length > 0) out.extra = u.extra;
  return out;
}

/**
 * Writes an audit.k8s.io/v1 `Event` for every request the policy selects,
 * at upstream's stages: `RequestReceived` once the request is authenticated
 * and authorized, `ResponseStarted` when a watch's stream starts,
 * `ResponseComplete` when the answer is sent (refusals by authentication or
 * authorization included), `Panic` for failures that were not API errors.
 * Every event names the tenant (`tenancy.plinth.dev/tenant` annotation), the
 * authenticated user and the impersonated one; bodies are recorded at the
 * `Request` and `RequestResponse` levels. Each response carries `Audit-Id`.
 */
export function installAudit(fastify: FastifyInstance, policy: AuditPolicy, writer: AuditLogWriter): void {
  const emit = (req: FastifyRequest, stage: AuditStage, code?: number) => {
    const rec = req.audit;
    if (!rec) return;
    rec.derived ??= attributesOf(req, req.authenticatedUser);
    rec.decision ??= policy.decide(rec.derived.attrs);
    const d = rec.decision;
    if (d.level === 'None' || d.omitStages.has(stage)) return;
    const { attrs, tenant, version } = rec.derived;
    const event: Record<string, unknown> = {
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: d.level,
      auditID: rec.id,
      stage,
      requestURI: req.url,
      verb: attrs.verb,
      user: req.authenticatedUser ? userJson(req.authenticatedUser) : {},
    };
    if (req.user && req.authenticatedUser && req.user !== req.authenticatedUser) event.impersonatedUser = userJson(req.user);
    if (rec.sourceIPs.length > 0) event.sourceIPs = rec.sourceIPs;
    if (req.headers['user-agent']) event.userAgent = req.headers['user-agent'];
    if (attrs.resourceRequest) {
      const ref: Record<string, string> = { resource: attrs.resource };
      if (attrs.namespace) ref.namespace = attrs.namespace;
      if (attrs.name) ref.name = attrs.name;
      if (attrs.apiGroup) ref.apiGroup = attrs.apiGroup;
      if (version) ref.apiVersion = version;
      if (attrs.subresource) ref.subresource = attrs.subresource;
      event.objectRef = ref;
    }
    if (code !== undefined) {
      const status: Record<string, unknown> = { metadata: {}, code };
      const body = rec.responseBody as { kind?: string; status?: string; reason?: string; message?: string } | undefined;
      if (code >= 400 && body?.kind === 'Status') Object.assign(status, { status: body.status, message: body.message, reason: body.reason });
      event.responseStatus = status;
    }
    if ((d.level === 'Request' || d.level === 'RequestResponse') && stage !== 'RequestReceived') {
      const request = jsonOf(req.body);
      if (request !== undefined) event.requestObject = d.omitManagedFields ? withoutManagedFields(request) : request;
    }
    if (d.level === 'RequestResponse' && stage === 'ResponseComplete' && rec.responseBody !== undefined) {
      event.responseObject = d.omitManagedFields ? withoutManagedFields(rec.responseBody) : rec.responseBody;
    }
    event.requestReceivedTimestamp = rec.receivedAt;
    event.stageTimestamp = new Date().toISOString();
    const annotations: Record<string, string> = { ...(stage === 'ResponseComplete' ? req.auditAnnotations : undefined), 'tenancy.plinth.dev/tenant': tenant };
    const authz = req.authorizationDecision;
    if (authz) {
      annotations['authorization.k8s.io/decision'] = authz.allowed ? 'allow' : 'forbid';
      if (authz.reason) annotations['authorization.k8s.io/reason'] = authz.reason;
    }
    event.annotations = annotations;
    writer.write(event);
  };
  const complete = (req: FastifyRequest, code: number) => {
    const rec = req.audit;
    if (!rec || rec.done) return;
    rec.done = true;
    emit(req, 'ResponseComplete', code);
  };

  // First of all hooks: the request's identity in the log, and when it arrived.
  fastify.addHook('onRequest', async (req, reply) => {
    req.audit = { id: randomUUID(), receivedAt: new Date().toISOString(), sourceIPs: sourceIps(req.raw.rawHeaders, req.raw.socket?.remoteAddress), done: false };
    // On the raw response, so that watches (which write their own headers) carry it too.
    reply.raw.setHeader('Audit-Id', req.audit.id);
  });
  // After authentication, authorization and fair queuing let the request through.
  fastify.addHook('preHandler', async (req, reply) => {
    emit(req, 'RequestReceived');
    req.auditResponseStarted = () => {
      emit(req, 'ResponseStarted', 200);
      // A watch's answer is never "sent" through Fastify: it completes when its stream ends.
      reply.raw.once('close', () => complete(req, 200));
    };
  });
  fastify.addHook('onSend', async (req, reply, payload) => {
    const rec = req.audit;
    if (rec && rec.decision?.level !== 'None' && (reply.statusCode >= 400 || rec.decision?.level === 'RequestResponse' || rec.decision === undefined)) rec.responseBody = jsonOf(payload);
    return payload;
  });
  fastify.addHook('onError', async (req, _reply, err) => {
    if (!(err as { status?: unknown }).status) emit(req, 'Panic', 500);
  });
  fastify.addHook('onResponse', async (req, reply) => complete(req, reply.statusCode));
}
