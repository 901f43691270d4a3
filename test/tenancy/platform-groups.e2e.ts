import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { certificateIdentity, requestAs, tokenIdentity } from '../support/credentials.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { grantClusterRole } from '../support/rbac.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const A = '/clusters/acme';

// A tenant's cluster-admin may impersonate inside its tenant, but never into the platform's own groups:
// system:masters is allowed everything everywhere and exempt from fair queuing and limits.
describe('platform groups cannot be impersonated from inside a tenant', { timeout: 120_000 }, () => {
  let s: TestServer;
  let token: string;

  before(async () => {
    s = await startTestServer('platform-groups');
    await request(s.url)
      .post(TENANTS)
      .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'acme' }, spec: { owners: [{ kind: 'User', name: 'alice' }] } })
      .expect(201);
    await request(s.url).post(`${A}/api/v1/namespaces/default/serviceaccounts`).send({ metadata: { name: 'ci' } }).expect(201);
    await grantClusterRole(s.url, 'ci-admin', 'cluster-admin', [{ kind: 'ServiceAccount', name: 'ci', namespace: 'default' }], A);
    token = (await request(s.url).post(`${A}/api/v1/namespaces/default/serviceaccounts/ci/token`).send({ spec: {} }).expect(201)).body.status.token as string;
  });
  after(async () => s?.close());

  it('answers 403 to kubectl --as-group system:masters with a cluster-admin ServiceAccount token of the tenant', async () => {
    const config = writeTestKubeconfig(`${s.url}${A}`, tokenIdentity(token));
    const ordinary = await kubectl(config, ['auth', 'whoami', '--as', 'mallory', '--as-group', 'devs']);
    assert.equal(ordinary.code, 0, ordinary.stderr);
    assert.match(ordinary.stdout, /Groups\s+\[devs system:authenticated\]/);
    const out = await kubectl(config, ['auth', 'whoami', '--as', 'mallory', '--as-group', 'system:masters']);
    assert.notEqual(out.code, 0);
    assert.doesNotMatch(out.stdout, /system:masters/);
    // kubectl words a refused SelfSubjectReview its own way; the Status it got says why.
    assert.match(out.stderr, /you do not have permission/);
    const raw = await requestAs(s.url, tokenIdentity(token))
      .post(`${A}/apis/authentication.k8s.io/v1/selfsubjectreviews`)
      .set('Impersonate-User', 'mallory')
      .set('Impersonate-Group', 'system:masters')
      .send({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' })
      .expect(403);
    assert.match(raw.body.message, /^groups "system:masters" is forbidden: User "system:serviceaccount:default:ci" cannot impersonate resource "groups" in API group "" at the cluster scope: /);
  });

  it('refuses the owner (client certificate) too, and the tenant-binding extra, while a platform administrator may impersonate both', async () => {
    const alice = requestAs(s.url, await certificateIdentity('alice'));
    const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
    const asMasters = await alice.post(`${A}/apis/authentication.k8s.io/v1/selfsubjectreviews`).set('Impersonate-User', 'x').set('Impersonate-Group', 'system:masters').send(review).expect(403);
    assert.equal(asMasters.body.reason, 'Forbidden');
    assert.deepEqual(asMasters.body.details, { name: 'system:masters', kind: 'groups' });
    const bound = await alice.post(`${A}/apis/authentication.k8s.io/v1/selfsubjectreviews`).set('Impersonate-User', 'x').set('Impersonate-Extra-tenancy.plinth.dev%2Ftenant', 'globex').send(review).expect(403);
    assert.match(bound.body.message, /cannot impersonate resource "userextras\/tenancy.plinth.dev\/tenant"/);
    const admin = await request(s.url).post(`${A}/apis/authentication.k8s.io/v1/selfsubjectreviews`).set('Impersonate-User', 'ops').set('Impersonate-Group', 'system:masters').send(review).expect(201);
    assert.deepEqual(admin.body.status.userInfo.groups, ['system:masters', 'system:authenticated']);
  });
});
