import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { UserInfo } from '@plinth/apimachinery';
import type { AuthorizationAttributes, Authorizer } from '@plinth/apimachinery';
import { ApiError, fieldSelectorAttributes, labelSelectorAttributes } from '@plinth/apimachinery';
import { requestInfoOf } from '../http/request-info.js';
import { sendPlain } from '../http/response-writer.js';
import type { AuthenticationService } from './authentication.service.js';
import { bearerTokenOf } from './bearer-token.js';
import { forbiddenMessage } from './forbidden-message.js';
import { ANONYMOUS_USER } from '@plinth/apimachinery';
import { impersonate, impersonationHeaders } from './impersonation.js';
import { peerCertificateOf } from './peer-certificate.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The (possibly impersonated) user of the request, set by the authentication hook. */
    user?: UserInfo;
    /** The authenticated user before impersonation (audit, SelfSubjectReview). */
    authenticatedUser?: UserInfo;
    /** Audiences the request's token was checked against. */
    authenticatedAudiences?: string[];
  }
}

/** The authorization attributes of a request, as upstream's RequestInfo resolver derives them. */
export function requestAttributes(req: FastifyRequest, user: UserInfo): AuthorizationAttributes {
  const info = requestInfoOf(req);
  if (!info.isResourceRequest || !info.verb) {
    const verb = { GET: 'get', HEAD: 'get', POST: 'post', PUT: 'put', PATCH: 'patch', DELETE: 'delete' }[req.method] ?? req.method.toLowerCase();
    return { user, tenant: info.tenant, verb, resourceRequest: false, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '', path: info.path };
  }
  return {
    user,
    tenant: info.tenant,
    verb: info.verb,
    resourceRequest: true,
    apiGroup: info.group,
    apiVersion: info.version,
    resource: info.resource,
    subresource: info.subresource,
    namespace: info.namespace,
    name: info.name,
    path: info.path,
    ...selectorsOf(req, info.verb),
  };
}

const SELECTOR_VERBS = new Set(['list', 'watch', 'deletecollection']);

/** KEP-4601: a list, watch or deletecollection's selectors (the first of each query parameter, as upstream's RequestInfo). */
function selectorsOf(req: FastifyRequest, verb: string): Pick<AuthorizationAttributes, 'fieldSelector' | 'labelSelector'> {
  const q = req.url.indexOf('?');
  if (!SELECTOR_VERBS.has(verb) || q < 0) return {};
  const params = new URLSearchParams(req.url.slice(q + 1));
  const fieldSelector = fieldSelectorAttributes(params.get('fieldSelector') ?? undefined);
  const labelSelector = labelSelectorAttributes(params.get('labelSelector') ?? undefined);
  return { ...(fieldSelector ? { fieldSelector } : {}), ...(labelSelector ? { labelSelector } : {}) };
}

function tenantOf(url: string): string {
  // An APIExport's view is a request to the export's own tenant (its provider's identities authenticate there).
  const m = /^\/clusters\/([^/?]+)/.exec(url) ?? /^\/services\/apiexport\/([^/?]+)\//.exec(url);
  if (!m) return 'default';
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1];
  }
}

function sendError(req: FastifyRequest, reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  sendPlain(req, reply, err.code, err.status);
  return reply;
}

/** Where the request hook records how long each phase took (histograms of /metrics). */
export interface RequestAuthTimings {
  authentication: { observe(labels: { result: string }, seconds: number): void };
  authorization: { observe(labels: { decision: string }, seconds: number): void };
}

/** Where the request hook traces its phases (spans `Authenticate` and `Authorize` under the request's); unset, nothing is traced. */
export interface RequestPhaseTracer {
  /** Runs `run` as the phase `name` of `req`; `describe` gives the span's attributes from the result. Resolves or rejects as `run` does. */
  phase<T>(req: FastifyRequest, name: string, run: () => T | Promise<T>, describe?: (result: T) => Record<string, string | number | boolean>): T | Promise<T>;
}

const UNTRACED: RequestPhaseTracer = { phase: (_req, _name, run) => run() };

const UNAUTHORIZED = () => new ApiError(401, 'Unauthorized', 'Unauthorized');

/**
 * Installs the request filters that run before any handler, in upstream's
 * order: authentication (401 Status when credentials are presented but
 * invalid, or none are and anonymous is off or not allowed on the
 * request's path), impersonation (400/403), then
 * authorization with `authorizer` (RBAC inside the addressed tenant, and
 * `system:masters` everywhere). Sets `req.user`. Times both phases into
 * `timings` (the authentication and authorization histograms of /metrics).
 */
export function installRequestAuthentication(
  fastify: FastifyInstance,
  authn: AuthenticationService,
  authorizer: Authorizer,
  logger: Logger,
  timings: RequestAuthTimings,
  tracer: RequestPhaseTracer = UNTRACED,
): void {
  fastify.addHook('onRequest', async (req, reply) => {
    const tenant = tenantOf(req.url);
    const raw = req.raw as unknown as { socket?: unknown; stream?: { session?: { socket?: unknown } } };
    const socket = raw.stream?.session?.socket ?? raw.socket;
    const authnStart = performance.now();
    const outcome = await tracer.phase(
      req,
      'Authenticate',
      () =>
        authn.authenticate({
          tenant,
          // As sent (before any rewrite), without the query: anonymous conditions are exact paths.
          path: req.originalUrl.split('?', 1)[0],
          bearerToken: bearerTokenOf(req.headers.authorization),
          peerCertificate: peerCertificateOf(socket),
        }),
      (o) => ({ result: !o.ok ? 'failure' : o.result.user.username === ANONYMOUS_USER ? 'anonymous' : 'success' }),
    );
    const result = !outcome.ok ? 'failure' : outcome.result.user.username === ANONYMOUS_USER ? 'anonymous' : 'success';
    timings.authentication.observe({ result }, (performance.now() - authnStart) / 1000);
    if (!outcome.ok) {
      logger.debug({ url: req.url, reasons: outcome.reasons }, 'unable to authenticate the request');
      return sendError(req, reply, UNAUTHORIZED());
    }
    let user = outcome.result.user;
    req.authenticatedUser = user;
    req.authenticatedAudiences = outcome.result.audiences;
    const authzStart = performance.now();
    let decided = 'error';
    try {
      const imp = impersonationHeaders(req.raw.rawHeaders);
      if (imp) user = await impersonate(user, tenant, imp, authorizer);
      req.user = user;
      const attrs = requestAttributes(req, user);
      const decision = await tracer.phase(req, 'Authorize', () => authorizer.authorize(attrs), (d) => ({ decision: d.allowed ? 'allowed' : 'denied', verb: attrs.verb, resource: attrs.resource }));
      decided = decision.allowed ? 'allowed' : 'denied';
      req.authorizationDecision = { allowed: decision.allowed, reason: decision.reason };
      // As upstream's WithAuthorization: an allow wins over errors; otherwise an error is a 500, not a 403.
      if (!decision.allowed && decision.error) throw ApiError.internal(decision.error);
      if (!decision.allowed) {
        throw new ApiError(403, 'Forbidden', forbiddenMessage(attrs, decision.reason), attrs.resourceRequest ? { name: attrs.name || undefined, group: attrs.apiGroup || undefined, kind: attrs.resource } : undefined);
      }
    } catch (err) {
      if (err instanceof ApiError) return sendError(req, reply, err);
      throw err;
    } finally {
      timings.authorization.observe({ decision: decided }, (performance.now() - authzStart) / 1000);
    }
    return undefined;
  });
}
