import { ApiError, isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { decodeObject } from '../../http/decode-object.js';
import { cborServed } from '../../http/cbor-serving.js';
import type { HandlerContext } from '../../http/handler-context.js';
import { parseWriteOptions } from '../../http/options/write-options.dto.js';
import { sendObject, setWarnings } from '../../http/response-writer.js';
import type { RequestAuthorizer } from '../authorizer-chain.js';
import { isTenantMember, type RbacIndexSource } from '../rbac-authorizer.js';
import {
  localSubjectAccessReviewResource,
  selfSubjectAccessReviewResource,
  selfSubjectRulesReviewResource,
  subjectAccessReviewResource,
} from '../../kinds/authorization/authorization.resources.js';
import { reviewAttributes, reviewedUser, reviewSpec, reviewStatus, rulesReviewStatus, validateAccessReview } from './access-review.js';

/** What the review handlers consult. */
export interface AccessReviewDeps {
  authorizer: RequestAuthorizer;
  indexes: RbacIndexSource;
}

const REVIEW_DEFS = new Set([subjectAccessReviewResource, localSubjectAccessReviewResource, selfSubjectAccessReviewResource, selfSubjectRulesReviewResource]);

/** Whether `def` is one of the access review kinds (answered by {@link handleAccessReview}, never stored). */
export function isAccessReview(def: unknown): boolean {
  return REVIEW_DEFS.has(def as typeof subjectAccessReviewResource);
}

function decode(ctx: HandlerContext): KubeObject {
  const opts = parseWriteOptions(ctx.query, ctx.queryAll.dryRun ?? []);
  return decodeObject(ctx.body, ctx.req.headers['content-type'], ctx.def, opts.fieldValidation, ctx.warnings, cborServed(ctx.req));
}

function send(ctx: HandlerContext, review: KubeObject, status: Record<string, unknown>): void {
  const out: KubeObject = { ...review, apiVersion: 'authorization.k8s.io/v1', kind: ctx.def.kind, status };
  // Re-encoded as upstream 1.34+ does: a zero (null) creationTimestamp is omitted, an empty ObjectMeta is `{}`.
  const meta: Record<string, unknown> = isPlainObject(out.metadata) ? { ...out.metadata } : {};
  if (meta.creationTimestamp === null) delete meta.creationTimestamp;
  out.metadata = meta as KubeObject['metadata'];
  setWarnings(ctx.reply, ctx.warnings);
  sendObject(ctx.req, ctx.reply, ctx.def, 201, out);
}

/**
 * POST of an access review (`kubectl auth can-i`, `can-i --list`,
 * delegated authorization), answered 201 with `status` and never stored:
 * SubjectAccessReview asks about `spec.user`/`groups` in the request's
 * tenant; LocalSubjectAccessReview the same inside the path's namespace
 * (which `spec.resourceAttributes.namespace` must match);
 * SelfSubjectAccessReview about the caller; SelfSubjectRulesReview lists
 * the caller's RBAC rules in `spec.namespace`. 422 for invalid reviews.
 */
export async function handleAccessReview(ctx: HandlerContext, deps: AccessReviewDeps): Promise<void> {
  const review = decode(ctx);
  const tenant = ctx.info.tenant;
  if (ctx.def === selfSubjectRulesReviewResource) {
    const spec = reviewSpec(review).spec;
    const namespace = typeof spec.namespace === 'string' ? spec.namespace : '';
    if (!namespace) throw ApiError.badRequest('no namespace on request');
    const index = await deps.indexes.get(tenant);
    // A non-member holds nothing in the tenant (see tenantDecision), whatever its bindings to everyone say.
    const member = deps.authorizer.isPrivileged(ctx.user.groups) || isTenantMember(index, ctx.user, tenant);
    const { rules, errors } = member ? index.rulesFor(ctx.user, namespace) : { rules: [], errors: [] };
    return send(ctx, review, rulesReviewStatus(rules, errors));
  }
  const kind = ctx.def.kind as 'SubjectAccessReview' | 'LocalSubjectAccessReview' | 'SelfSubjectAccessReview';
  const errs = validateAccessReview(kind, review);
  if (errs.length > 0) throw ApiError.invalid({ group: ctx.def.group, kind, name: '' }, errs);
  const { spec, resource, nonResource } = reviewSpec(review);
  if (ctx.def === localSubjectAccessReviewResource) {
    const namespace = ctx.info.namespace;
    if (resource && resource.namespace !== namespace) throw ApiError.badRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`);
  }
  const user = ctx.def === selfSubjectAccessReviewResource ? ctx.user : reviewedUser(spec);
  const decision = await deps.authorizer.authorize(reviewAttributes(user, tenant, resource, nonResource));
  send(ctx, review, reviewStatus(decision));
}

/** Injection token of the {@link AccessReviewDeps} the SubjectAccessReview family is answered with. */
export const ACCESS_REVIEWS = Symbol('ACCESS_REVIEWS');
