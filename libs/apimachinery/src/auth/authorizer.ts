import type { UserInfo } from './user-info.js';

/**
 * What an authorizer decides on, as upstream's authorizer.Attributes: who
 * asks, in which tenant, to do what. Resource requests fill the resource
 * fields; non-resource requests (`/healthz`, `/version`, `/api`,
 * `/openapi/v2`, ...) fill `path` and leave `resourceRequest` false.
 */
export interface AuthorizationAttributes {
  user: UserInfo;
  /** The logical cluster the request addresses ('default' for unprefixed paths). */
  tenant: string;
  /** get, list, watch, create, update, patch, delete, deletecollection, impersonate, bind, escalate, use, ... */
  verb: string;
  resourceRequest: boolean;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** The request path without the tenant prefix (non-resource requests). */
  path: string;
  /** KEP-4601: the requirements of a list, watch or deletecollection's field selector; undefined when it has none. */
  fieldSelector?: SelectorRequirementAttributes[];
  /** KEP-4601: the requirements of its label selector; undefined when it has none. */
  labelSelector?: SelectorRequirementAttributes[];
}

/** One selector requirement as authorization.k8s.io/v1 carries it (FieldSelectorRequirement, LabelSelectorRequirement). */
export interface SelectorRequirementAttributes {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

/** An authorizer's answer; `reason` is appended to upstream's Forbidden message when set. */
export interface AuthorizationDecision {
  allowed: boolean;
  /** True when the authorizer has no opinion (the next authorizer in a union is asked). */
  noOpinion?: boolean;
  reason?: string;
  /** Why an authorizer could not decide (a webhook unreachable, a matchCondition failing): a request nothing allowed then gets upstream's 500 InternalError rather than 403. */
  error?: string;
}

/** Decides whether a request may proceed. Must not throw for an unknown tenant or user: deny instead. */
export interface Authorizer {
  authorize(attrs: AuthorizationAttributes): Promise<AuthorizationDecision> | AuthorizationDecision;
}
