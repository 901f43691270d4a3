import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { CertificateAuthority } from '../../apps/api/src/pki/certificate-authority.js';
import { testKubeConfig } from '../support/client-node.js';
import { anonymousIdentity, certificateIdentity, requestAs, tokenIdentity } from '../support/credentials.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { grantClusterRole } from '../support/rbac.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { CoreV1Api } from '@kubernetes/client-node';

const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };

function whoami(url: string, as = requestAs(url, anonymousIdentity()), headers: Record<string, string | string[]> = {}) {
  const t = as.post('/apis/authentication.k8s.io/v1/selfsubjectreviews');
  for (const [k, v] of Object.entries(headers)) t.set(k, v as string);
  return t.send({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
}

describe('authentication: client certificates, token file, anonymous, impersonation', { timeout: 120_000 }, () => {
  let s: TestServer;

  before(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-tokens-'));
    const file = path.join(dir, 'tokens.csv');
    writeFileSync(file, 'static-token-1,alice,uid-alice,"devs,ops"\n\nstatic-token-2,bob,uid-bob\n');
    s = await startTestServer('authn_chain', { PLINTH_TOKEN_AUTH_FILE: file });
  });
  after(async () => s.close());

  it('serves the administrator client certificate identity (CN user, O groups) and kubectl auth whoami shows it', async () => {
    const res = await whoami(s.url, requestAs(s.url, await certificateIdentity('plinth-admin', ['system:masters']))).expect(201);
    assert.deepEqual(res.body.status.userInfo, { username: 'plinth-admin', groups: ['system:masters', 'system:authenticated'] });
    const out = await kubectl(writeTestKubeconfig(s.url), ['auth', 'whoami']);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /Username\s+plinth-admin/);
    assert.match(out.stdout, /Groups\s+\[system:masters system:authenticated\]/);
  });

  it('authenticates other client certificates of the CA and refuses certificates of another CA with 401', async () => {
    const jane = await certificateIdentity('jane', ['devs', 'qa']);
    const res = await whoami(s.url, requestAs(s.url, jane)).expect(201);
    assert.deepEqual(res.body.status.userInfo, { username: 'jane', groups: ['devs', 'qa', 'system:authenticated'] });
    const stranger = await (await CertificateAuthority.generate('stranger')).issue({ commonName: 'plinth-admin', organizations: ['system:masters'], usage: 'client', validDays: 1 });
    const r = await requestAs(s.url, { caPem: jane.caPem, certPem: stranger.certPem, keyPem: stranger.keyPem }).get('/api/v1/namespaces').expect(401);
    assert.deepEqual(r.body, UNAUTHORIZED);
  });

  it('refuses a certificate made for servers, not clients', async () => {
    const { testCertificateAuthority } = await import('../support/credentials.js');
    const server = await testCertificateAuthority().issue({ commonName: 'sneaky', usage: 'server', dnsNames: ['x'], validDays: 1 });
    const jane = await certificateIdentity('jane');
    await requestAs(s.url, { caPem: jane.caPem, certPem: server.certPem, keyPem: server.keyPem }).get('/api/v1/namespaces').expect(401);
  });

  it('authenticates tokens of the --token-auth-file and refuses unknown tokens with 401', async () => {
    const alice = await whoami(s.url, requestAs(s.url, tokenIdentity('static-token-1'))).expect(201);
    assert.deepEqual(alice.body.status.userInfo, { username: 'alice', uid: 'uid-alice', groups: ['devs', 'ops', 'system:authenticated'] });
    const bob = await whoami(s.url, requestAs(s.url, tokenIdentity('static-token-2'))).expect(201);
    assert.deepEqual(bob.body.status.userInfo, { username: 'bob', uid: 'uid-bob', groups: ['system:authenticated'] });
    const bad = await requestAs(s.url, tokenIdentity('static-token-3')).get('/api/v1/namespaces').expect(401);
    assert.deepEqual(bad.body, UNAUTHORIZED);
    const out = await kubectl(writeTestKubeconfig(s.url, tokenIdentity('static-token-1')), ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    assert.equal(out.stdout, 'alice');
  });

  it('client-node authenticates with a client certificate and with a token', async () => {
    const core = testKubeConfig(s.url).makeApiClient(CoreV1Api);
    const list = await core.listNamespace();
    assert.ok(list.items.some((n) => n.metadata?.name === 'default'));
    const asAlice = testKubeConfig(s.url, tokenIdentity('static-token-1')).makeApiClient(CoreV1Api);
    await assert.rejects(asAlice.listNamespace(), (err: { code?: number }) => err.code === 403);
    await grantClusterRole(s.url, 'devs-view', 'view', [{ kind: 'Group', name: 'devs' }]);
    assert.ok((await asAlice.listNamespace()).items.length > 0);
    const asNobody = testKubeConfig(s.url, tokenIdentity('wrong')).makeApiClient(CoreV1Api);
    await assert.rejects(asNobody.listNamespace(), (e: { code?: number }) => e.code === 401);
  });

  it('treats requests without credentials as system:anonymous, allowed only the public health and version paths', async () => {
    const anon = requestAs(s.url, anonymousIdentity());
    const res = await whoami(s.url, anon).expect(403);
    assert.equal(res.body.message, 'selfsubjectreviews.authentication.k8s.io is forbidden: User "system:anonymous" cannot create resource "selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope');
    for (const p of ['/healthz', '/livez', '/readyz', '/version']) await anon.get(p).expect(200);
    const ns = await anon.get('/api/v1/namespaces/default/configmaps').expect(403);
    assert.equal(ns.body.reason, 'Forbidden');
    assert.equal(ns.body.message, 'configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "default"');
    const api = await anon.get('/api').expect(403);
    assert.equal(api.body.message, 'forbidden: User "system:anonymous" cannot get path "/api"');
    const metrics = await anon.get('/metrics').expect(403);
    assert.equal(metrics.body.message, 'forbidden: User "system:anonymous" cannot get path "/metrics"');
  });

  it('impersonates users, groups, uid and extra for system:masters (kubectl --as, --as-group)', async () => {
    const out = await kubectl(writeTestKubeconfig(s.url), ['auth', 'whoami', '--as', 'jane', '--as-group', 'devs', '--as-group', 'qa', '--as-uid', 'u-1', '-o', 'json']);
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout).status.userInfo, { username: 'jane', uid: 'u-1', groups: ['devs', 'qa', 'system:authenticated'] });
    const extra = await whoami(s.url, requestAs(s.url, await certificateIdentity('root', ['system:masters'])), {
      'Impersonate-User': 'system:serviceaccount:ns1:robot',
      'Impersonate-Extra-Scopes': ['view', 'edit'],
      'Impersonate-Extra-acme.com%2Fproject': 'p1',
    }).expect(201);
    assert.deepEqual(extra.body.status.userInfo, {
      username: 'system:serviceaccount:ns1:robot',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated'],
      extra: { scopes: ['view', 'edit'], 'acme.com/project': ['p1'] },
    });
    const anonymous = await whoami(s.url, requestAs(s.url, await certificateIdentity('root', ['system:masters'])), { 'Impersonate-User': 'system:anonymous' }).expect(403);
    assert.match(anonymous.body.message, /User "system:anonymous" cannot create resource "selfsubjectreviews"/);
  });

  it('refuses impersonation to users who may not impersonate, with upstream messages', async () => {
    const jane = requestAs(s.url, await certificateIdentity('jane', ['devs']));
    const denied = await whoami(s.url, jane, { 'Impersonate-User': 'plinth-admin' }).expect(403);
    assert.equal(denied.body.message, 'users "plinth-admin" is forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster scope');
    assert.deepEqual(denied.body.details, { name: 'plinth-admin', kind: 'users' });
    const sa = await whoami(s.url, jane, { 'Impersonate-User': 'system:serviceaccount:kube-system:boss' }).expect(403);
    assert.equal(sa.body.message, 'serviceaccounts "boss" is forbidden: User "jane" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "kube-system"');
    // (kubectl commands that start with discovery print only "Forbidden: unknown", as against kube-apiserver.)
    const out = await kubectl(writeTestKubeconfig(s.url, await certificateIdentity('jane')), ['create', 'configmap', 'x', '--from-literal=a=b', '--as', 'someone']);
    assert.notEqual(out.code, 0);
    assert.match(out.stderr, /users "someone" is forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster scope/);
    const noUser = await whoami(s.url, requestAs(s.url, await certificateIdentity('root', ['system:masters'])), { 'Impersonate-Group': 'devs' }).expect(400);
    assert.equal(noUser.body.message, 'requested [group devs] without impersonating a user');
  });
});
