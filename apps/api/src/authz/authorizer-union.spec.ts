import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuthorizationAttributes, AuthorizationDecision } from '@plinth/apimachinery';
import { type NamedAuthorizer, unionAuthorize } from './authorizer-union.js';
import { subjectAccessReviewBody, subjectAccessReviewSpec } from './webhook/subject-access-review.js';

const attrs: AuthorizationAttributes = {
  user: { username: 'u', groups: ['g'], extra: { 'tenancy.plinth.dev/tenant': ['acme', 'other'] } },
  tenant: 'acme',
  verb: 'list',
  resourceRequest: true,
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'pods',
  subresource: '',
  namespace: 'ns',
  name: '',
  path: '/api/v1/namespaces/ns/pods',
  labelSelector: [{ key: 'team', operator: 'In', values: ['a'] }],
};
const entry = (name: string, d: AuthorizationDecision | Promise<AuthorizationDecision>): NamedAuthorizer => ({ type: 'Webhook', name, authorizer: { authorize: () => d } });

describe('the union of authorizers', () => {
  it('the first allow or deny decides; no opinions join their reasons; errors are kept', async () => {
    assert.deepEqual(unionAuthorize(attrs, [entry('a', { allowed: false, noOpinion: true, reason: 'ra' }), entry('b', { allowed: true, reason: 'rb' }), entry('c', { allowed: false })]), { allowed: true, reason: 'rb' });
    assert.deepEqual(await unionAuthorize(attrs, [entry('a', Promise.resolve({ allowed: false, reason: 'no' })), entry('b', { allowed: true })]), { allowed: false, reason: 'no' });
    assert.deepEqual(unionAuthorize(attrs, [entry('a', { allowed: false, noOpinion: true, reason: 'x', error: 'e1' }), entry('b', { allowed: false, noOpinion: true, reason: 'y', error: 'e2' })]), {
      allowed: false,
      noOpinion: true,
      reason: 'x\ny',
      error: '[e1, e2]',
    });
    assert.deepEqual(unionAuthorize(attrs, [entry('a', { allowed: false, noOpinion: true, error: 'down' }), entry('b', { allowed: true })]), { allowed: true }, 'an allow wins over an earlier error');
  });

  it('builds the SubjectAccessReview: v1 with selectors and the addressed tenant, v1beta1 with its field names and without selectors', () => {
    const spec = subjectAccessReviewSpec(attrs);
    assert.deepEqual(spec, {
      resourceAttributes: { namespace: 'ns', verb: 'list', version: 'v1', resource: 'pods', labelSelector: { requirements: [{ key: 'team', operator: 'In', values: ['a'] }] } },
      user: 'u',
      groups: ['g'],
      extra: { 'authorization.plinth.dev/tenant': ['acme'], 'tenancy.plinth.dev/tenant': ['acme', 'other'] },
    });
    const beta = subjectAccessReviewBody(spec, 'v1beta1') as { apiVersion: string; spec: Record<string, unknown> };
    assert.equal(beta.apiVersion, 'authorization.k8s.io/v1beta1');
    assert.deepEqual(beta.spec.group, ['g']);
    assert.equal(beta.spec.groups, undefined);
    assert.deepEqual(beta.spec.resourceAttributes, { namespace: 'ns', verb: 'list', version: 'v1', resource: 'pods' });
  });
});
