import type { KindRest } from '../../handlers/kind-rest.js';
import { type AccessReviewDeps, handleAccessReview, isAccessReview } from './access-review.handler.js';

/** The access reviews (SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview): a create answered with the review's status, never stored. */
export function accessReviewRest(deps: AccessReviewDeps): KindRest {
  return { serves: isAccessReview, verbs: { create: (ctx) => handleAccessReview(ctx, deps) } };
}
