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
}

/** An authorizer's answer; `reason` is appended to upstream's Forbidden message when set. */
export interface AuthorizationDecision {
  allowed: boolean;
  /** True when the authorizer has no opinion (the next authorizer in a union is asked). */
  noOpinion?: boolean;
  reason?: string;
}

/** Decides whether a request may proceed. Must not throw for an unknown tenant or user: deny instead. */
export interface Authorizer {
  authorize(attrs: AuthorizationAttributes): Promise<AuthorizationDecision> | AuthorizationDecision;
}
