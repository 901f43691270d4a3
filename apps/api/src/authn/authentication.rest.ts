import type { KindRest } from '../handlers/kind-rest.js';
import { selfSubjectReviewResource, serviceAccountResource, tokenReviewResource } from '../kinds/authentication/authentication.resources.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { handleSelfSubjectReview, handleTokenRequest, handleTokenReview } from './authentication.handlers.js';
import type { AuthenticationService } from './authentication.service.js';

/** TokenReview: a create answered with the token's user, never stored. */
export function tokenReviewRest(authn: AuthenticationService): KindRest {
  return { serves: (def) => def === tokenReviewResource, verbs: { create: (ctx) => handleTokenReview(ctx, authn) } };
}

/** SelfSubjectReview: a create answered with the caller's user, never stored. */
export function selfSubjectReviewRest(): KindRest {
  return { serves: (def) => def === selfSubjectReviewResource, verbs: { create: (ctx) => handleSelfSubjectReview(ctx) } };
}

/** A ServiceAccount's `token` subresource (TokenRequest): a create that issues a bound token of at most `maxSeconds`. */
export function serviceAccountTokenRest(store: ResourceStoreService, authn: AuthenticationService, maxSeconds: number): KindRest {
  return { serves: (def) => def === serviceAccountResource, subresources: { token: { create: (ctx) => handleTokenRequest(ctx, store, authn, maxSeconds) } } };
}
