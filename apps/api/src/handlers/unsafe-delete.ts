import { ApiError, type AuthorizationAttributes, type FieldError } from '@plinth/apimachinery';
import type { HandlerContext } from '../http/handler-context.js';

/** The DeleteOptions field (and query parameter) of KEP-3926's unsafe delete. */
export const UNSAFE_DELETE_OPTION = 'ignoreStoreReadErrorWithClusterBreakingPotential';

/** The verb a user needs, besides delete, for an unsafe delete (upstream's). */
export const UNSAFE_DELETE_VERB = 'unsafe-delete-ignore-read-errors';

/** Injection token of {@link UnsafeDeleteDeps}. */
export const UNSAFE_DELETE = Symbol('UNSAFE_DELETE');

/** What an unsafe delete needs from the server: the gate and the authorizer. */
export interface UnsafeDeleteDeps {
  /** AllowUnsafeMalformedObjectDeletion is on (alpha, off by default, in upstream 1.35). */
  enabled: boolean;
  /** Answers whether the user may do a verb (the RBAC authorizer, given by the wiring). */
  authorizer: { authorize(attrs: AuthorizationAttributes): { allowed: boolean; reason?: string } | Promise<{ allowed: boolean; reason?: string }> };
}

function truthy(v: unknown): boolean {
  return v === true || v === 'true' || v === '1' || v === 'True' || v === 'TRUE' || v === 't' || v === 'T';
}

/**
 * Whether this DELETE asks to ignore store read errors (body first, then the
 * query). With the gate off the option is ignored, as upstream drops it.
 * Throws upstream's 422 Invalid DeleteOptions when it is combined with
 * dryRun, propagationPolicy, orphanDependents, gracePeriodSeconds or
 * preconditions, and upstream's 422 for a DELETECOLLECTION.
 */
export function unsafeDeleteRequested(ctx: HandlerContext, body: Record<string, unknown>, collection: boolean, deps?: UnsafeDeleteDeps): boolean {
  if (!deps?.enabled) return false;
  const raw = body[UNSAFE_DELETE_OPTION] ?? ctx.query[UNSAFE_DELETE_OPTION];
  if (!truthy(raw)) return false;
  const invalid = (detail: string): FieldError => ({ type: 'FieldValueInvalid', field: UNSAFE_DELETE_OPTION, value: true, detail });
  if (collection) throw ApiError.invalid({ group: '', kind: 'DeleteOptions', name: '' }, [invalid('is not allowed with DELETECOLLECTION, try again after removing the option')]);
  const set = (f: string): boolean => body[f] !== undefined && body[f] !== null;
  const errs: FieldError[] = [];
  const dry = body.dryRun ?? ctx.queryAll.dryRun;
  if (Array.isArray(dry) ? dry.length > 0 : dry !== undefined && dry !== null) errs.push(invalid('cannot be set together with .dryRun'));
  if (set('propagationPolicy') || ctx.query.propagationPolicy !== undefined) errs.push(invalid('cannot be set together with .propagationPolicy'));
  if (set('orphanDependents') || ctx.query.orphanDependents !== undefined) errs.push(invalid('cannot be set together with .orphanDependents'));
  if (set('gracePeriodSeconds') || ctx.query.gracePeriodSeconds !== undefined) errs.push(invalid('cannot be set together with .gracePeriodSeconds'));
  if (set('preconditions')) errs.push(invalid('cannot be set together with .preconditions'));
  if (errs.length > 0) throw ApiError.invalid({ group: '', kind: 'DeleteOptions', name: '' }, errs);
  return true;
}

/**
 * Upstream's check of an unsafe delete: the user needs the
 * `unsafe-delete-ignore-read-errors` verb on the object, besides delete
 * (which the request's own authorization checked). Throws 403 with
 * upstream's message otherwise.
 */
export async function authorizeUnsafeDelete(ctx: HandlerContext, deps: UnsafeDeleteDeps): Promise<void> {
  const { def, info } = ctx;
  const attrs: AuthorizationAttributes = {
    user: ctx.user,
    tenant: info.tenant,
    resourceRequest: true,
    verb: UNSAFE_DELETE_VERB,
    apiGroup: def.group,
    apiVersion: info.version,
    resource: def.resource,
    subresource: '',
    namespace: def.namespaced ? info.namespace : '',
    name: info.name,
    path: '',
  };
  const decision = await deps.authorizer.authorize(attrs);
  if (decision.allowed) return;
  throw ApiError.forbidden({ group: def.group, kind: def.resource, name: info.name }, `not permitted to do "${UNSAFE_DELETE_VERB}", reason: ${decision.reason ?? ''}`);
}
