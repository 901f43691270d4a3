import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { certificateIdentity, requestAs } from '../support/credentials.js';
import { grantInNamespace } from '../support/rbac.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const ADM = '/apis/admissionregistration.k8s.io/v1';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

// The CEL `authorizer` of ValidatingAdmissionPolicy expressions, answered by RBAC for the request's user.
describe('admission policies: the authorizer variable', { timeout: 120_000 }, () => {
  let s: TestServer;

  before(async () => {
    s = await startTestServer('policy-authorizer');
    await request(s.url).post('/api/v1/namespaces').send({ metadata: { name: 'app' } }).expect(201);
    await request(s.url)
      .post(`${ADM}/validatingadmissionpolicies`)
      .send({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'approvers-only' },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] },
          validations: [
            { expression: "authorizer.group('example.com').resource('releases').namespace(object.metadata.namespace).check('approve').allowed()", message: 'only approvers may create configmaps here' },
            { expression: "authorizer.requestResource.check('create').allowed()", message: 'the request itself must be allowed' },
            { expression: "!authorizer.serviceAccount('app', 'nobody').group('').resource('secrets').check('get').allowed()", message: 'a ServiceAccount without bindings must not read secrets' },
            { expression: "authorizer.path('/healthz').check('get').allowed()", message: 'everyone may read /healthz' },
          ],
        },
      })
      .expect(201);
    await request(s.url)
      .post(`${ADM}/validatingadmissionpolicybindings`)
      .send({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'approvers-only' }, spec: { policyName: 'approvers-only', validationActions: ['Deny'] } })
      .expect(201);
    await grantInNamespace(s.url, 'app', 'jane-edit', 'edit', [{ kind: 'User', name: 'jane' }]);
  });
  after(async () => s?.close());

  it('denies a user RBAC does not allow the checked verb, and admits them once a Role grants it', async () => {
    const jane = requestAs(s.url, await certificateIdentity('jane'));
    const denied = await jane.post('/api/v1/namespaces/app/configmaps').send({ metadata: { name: 'c1' } });
    // A validation without a reason denies as Invalid (422), as upstream.
    assert.equal(denied.status, 422, JSON.stringify(denied.body));
    assert.match(denied.body.message, /ValidatingAdmissionPolicy 'approvers-only' with binding 'approvers-only' denied request: only approvers may create configmaps here/);
    await request(s.url)
      .post(`${RBAC}/namespaces/app/roles`)
      .send({ metadata: { name: 'approver' }, rules: [{ apiGroups: ['example.com'], resources: ['releases'], verbs: ['approve'] }] })
      .expect(201);
    await request(s.url)
      .post(`${RBAC}/namespaces/app/rolebindings`)
      .send({ metadata: { name: 'jane-approves' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'approver' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'jane' }] })
      .expect(201);
    await jane.post('/api/v1/namespaces/app/configmaps').send({ metadata: { name: 'c1' } }).expect(201);
    // Platform administrators are allowed everything, the custom verb included.
    await request(s.url).post('/api/v1/namespaces/app/configmaps').send({ metadata: { name: 'c2' } }).expect(201);
  });
  it('charges each authorization check upstream\'s fixed cost: two fit one expression, a third exceeds the per-call limit', async () => {
    const check = (verb: string) => `authorizer.group('').resource('secrets').namespace('app').check('${verb}').allowed()`;
    const policy = (name: string, expression: string) => ({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['secrets'] }], objectSelector: { matchLabels: { policy: name } } },
        validations: [{ expression }],
      },
    });
    const bind = (name: string) => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name }, spec: { policyName: name, validationActions: ['Deny'] } });
    for (const [name, expression] of [
      ['two-checks', `${check('get')} && ${check('list')}`],
      ['three-checks', `${check('get')} && ${check('list')} && ${check('watch')}`],
    ]) {
      await request(s.url).post(`${ADM}/validatingadmissionpolicies`).send(policy(name, expression)).expect(201);
      await request(s.url).post(`${ADM}/validatingadmissionpolicybindings`).send(bind(name)).expect(201);
    }
    const secret = (name: string, policyName: string) => ({ metadata: { name, labels: { policy: policyName } }, stringData: { a: 'b' } });
    // The administrator is allowed all three verbs, so only the cost decides.
    await request(s.url).post('/api/v1/namespaces/app/secrets').send(secret('s2', 'two-checks')).expect(201);
    const denied = await request(s.url).post('/api/v1/namespaces/app/secrets').send(secret('s3', 'three-checks'));
    assert.equal(denied.status, 422, JSON.stringify(denied.body));
    assert.match(denied.body.message, /ValidatingAdmissionPolicy 'three-checks' with binding 'three-checks' denied request: expression '.*' resulted in error: operation cancelled: actual cost limit exceeded$/);
  });
});
