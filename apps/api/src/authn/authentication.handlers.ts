import { type FieldError, isPlainObject, type KubeObject, rfc3339Now } from '@plinth/apimachinery';
import { ApiError } from '@plinth/apimachinery';
import { decodeObject } from '../http/decode-object.js';
import { cborServed } from '../http/cbor-serving.js';
import type { HandlerContext } from '../http/handler-context.js';
import { parseWriteOptions } from '../http/options/write-options.dto.js';
import { sendObject, setWarnings } from '../http/response-writer.js';
import { serviceAccountResource, tokenRequestKind } from '../kinds/authentication/authentication.resources.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import type { AuthenticationService } from './authentication.service.js';

/** Upstream's bounds of TokenRequest `spec.expirationSeconds`. */
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;
const DEFAULT_EXPIRATION_SECONDS = 3600;

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function decode(ctx: HandlerContext, def: typeof tokenRequestKind): KubeObject {
  const opts = parseWriteOptions(ctx.query, ctx.queryAll.dryRun ?? []);
  return decodeObject(ctx.body, ctx.req.headers['content-type'], def, opts.fieldValidation, ctx.warnings, cborServed(ctx.req));
}

function validateExpiration(seconds: number): FieldError[] {
  if (seconds < MIN_EXPIRATION_SECONDS) return [{ type: 'FieldValueInvalid', field: 'spec.expirationSeconds', value: seconds, detail: 'may not specify a duration less than 10 minutes' }];
  if (seconds > MAX_EXPIRATION_SECONDS) return [{ type: 'FieldValueInvalid', field: 'spec.expirationSeconds', value: seconds, detail: 'may not specify a duration larger than 2^32 seconds' }];
  return [];
}

/**
 * POST `serviceaccounts/{name}/token` (TokenRequest, `kubectl create token`):
 * a bound token for the live ServiceAccount of the request's tenant and
 * namespace, for `spec.audiences` (default: the API audiences), valid
 * `spec.expirationSeconds` (default 1 h, 10 min to 2^32 s, capped by
 * PLINTH_SERVICE_ACCOUNT_MAX_TOKEN_SECONDS). 404 when the ServiceAccount
 * does not exist; 201 with the token in `status`. Under dryRun=All no token is signed.
 */
export async function handleTokenRequest(ctx: HandlerContext, store: ResourceStoreService, authn: AuthenticationService, maxSeconds: number): Promise<void> {
  const { tenant, namespace, name } = ctx.info;
  const sa = await store.get(tenant, serviceAccountResource, namespace, name);
  const req = decode(ctx, tokenRequestKind);
  const spec = isPlainObject(req.spec) ? req.spec : {};
  const requested = typeof spec.expirationSeconds === 'number' ? spec.expirationSeconds : DEFAULT_EXPIRATION_SECONDS;
  const errs = validateExpiration(requested);
  if (errs.length > 0) throw ApiError.invalid({ group: 'authentication.k8s.io', kind: 'TokenRequest', name }, errs);
  if (spec.boundObjectRef !== undefined && spec.boundObjectRef !== null) {
    const kind = isPlainObject(spec.boundObjectRef) ? String(spec.boundObjectRef.kind ?? '') : '';
    throw ApiError.badRequest(`cannot bind token for serviceaccount ${JSON.stringify(name)} to object of kind ${JSON.stringify(kind)}`);
  }
  const audiences = stringList(spec.audiences).length > 0 ? stringList(spec.audiences) : authn.serviceAccountTokens.apiAudiences;
  const expirationSeconds = Math.min(requested, maxSeconds);
  const uid = String((sa.body.metadata as { uid?: string }).uid ?? '');
  const dryRun = parseWriteOptions(ctx.query, ctx.queryAll.dryRun ?? []).dryRun;
  const issued = dryRun
    ? { token: '', expiresAt: new Date(Date.now() + expirationSeconds * 1000) }
    : await authn.serviceAccountTokens.issue({ tenant, tenantUid: await authn.deps.tenantUid(tenant), namespace, name, uid, audiences, expirationSeconds });
  const out: KubeObject = {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    metadata: { name, namespace, creationTimestamp: rfc3339Now() },
    spec: { audiences, expirationSeconds, boundObjectRef: null },
    status: { token: issued.token, expirationTimestamp: issued.expiresAt.toISOString().replace(/\.\d+Z$/, 'Z') },
  };
  setWarnings(ctx.reply, ctx.warnings);
  sendObject(ctx.req, ctx.reply, tokenRequestKind, 201, out);
}

/**
 * POST tokenreviews: authenticates `spec.token` (required) in the request's
 * tenant for `spec.audiences` and answers 201 with the user, or
 * `authenticated: false` and an error.
 */
export async function handleTokenReview(ctx: HandlerContext, authn: AuthenticationService): Promise<void> {
  const review = decode(ctx, ctx.def as typeof tokenRequestKind);
  const spec = isPlainObject(review.spec) ? review.spec : {};
  const token = typeof spec.token === 'string' ? spec.token : '';
  if (!token) throw ApiError.badRequest('token is required for TokenReview in authentication');
  const audiences = stringList(spec.audiences);
  const outcome = await authn.reviewToken(token, ctx.info.tenant, audiences);
  const status: Record<string, unknown> = outcome.result
    ? { authenticated: true, user: userInfoJson(outcome.result.user), audiences: outcome.result.audiences ?? [] }
    : { user: {}, error: outcome.error };
  const out: KubeObject = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: {} as KubeObject['metadata'], spec, status };
  sendObject(ctx.req, ctx.reply, ctx.def, 201, out);
}

/** POST selfsubjectreviews (`kubectl auth whoami`): 201 with the requester's (possibly impersonated) user. */
export async function handleSelfSubjectReview(ctx: HandlerContext): Promise<void> {
  decode(ctx, ctx.def as typeof tokenRequestKind);
  const out: KubeObject = {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
    metadata: { creationTimestamp: rfc3339Now() },
    status: { userInfo: userInfoJson(ctx.user) },
  };
  sendObject(ctx.req, ctx.reply, ctx.def, 201, out);
}

function userInfoJson(u: HandlerContext['user']): Record<string, unknown> {
  const out: Record<string, unknown> = { username: u.username };
  if (u.uid) out.uid = u.uid;
  out.groups = u.groups;
  if (u.extra && Object.keys(u.extra).length > 0) out.extra = u.extra;
  return out;
}
