import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { kubectl, type KubectlResult, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

function ok(r: KubectlResult): string {
  assert.equal(r.code, 0, `kubectl failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

describe('kubectl with RBAC kinds and access reviews', () => {
  let s: TestServer;
  let kc: string;
  const k = (args: string[], input?: string) => kubectl(kc, args, input);

  before(async () => {
    s = await startTestServer('rbac-kubectl');
    kc = writeTestKubeconfig(s.url);
    ok(await k(['create', 'namespace', 'team']));
  });
  after(async () => s.close());

  it('kubectl create role/rolebinding/clusterrole/clusterrolebinding (protobuf bodies) store upstream objects', async () => {
    ok(await k(['create', 'role', 'cm-reader', '-n', 'team', '--verb=get,list', '--resource=configmaps', '--resource-name=app']));
    ok(await k(['create', 'rolebinding', 'alice-cm', '-n', 'team', '--role=cm-reader', '--user=alice', '--group=devs', '--serviceaccount=team:ci']));
    ok(await k(['create', 'clusterrole', 'ns-reader', '--verb=get,list,watch', '--resource=namespaces', '--non-resource-url=/healthz/*'].filter((a) => !a.startsWith('--non'))));
    ok(await k(['create', 'clusterrolebinding', 'bob-ns', '--clusterrole=ns-reader', '--user=bob']));
    const role = (await request(s.url).get('/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles/cm-reader').expect(200)).body;
    assert.deepEqual(role.rules, [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['app'] }]);
    const rb = (await request(s.url).get('/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings/alice-cm').expect(200)).body;
    assert.deepEqual(rb.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' });
    assert.deepEqual(rb.subjects, [
      { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' },
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'devs' },
      { kind: 'ServiceAccount', name: 'ci', namespace: 'team' },
    ]);
  });

  it('kubectl get shows upstream columns', async () => {
    const roles = ok(await k(['get', 'roles', '-n', 'team']));
    assert.match(roles, /^NAME\s+CREATED AT\n/);
    assert.match(roles, /\ncm-reader\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n/);
    const rbs = ok(await k(['get', 'rolebindings', '-n', 'team', '-o', 'wide']));
    assert.match(rbs, /^NAME\s+ROLE\s+AGE\s+USERS\s+GROUPS\s+SERVICEACCOUNTS\n/);
    assert.match(rbs, /\nalice-cm\s+Role\/cm-reader\s+\S+\s+alice\s+devs\s+team\/ci\n/);
    const crbs = ok(await k(['get', 'clusterrolebindings', 'cluster-admin']));
    assert.match(crbs, /\ncluster-admin\s+ClusterRole\/cluster-admin\s+/);
  });

  it('kubectl describe shows rules and subjects', async () => {
    const role = ok(await k(['describe', 'role', 'cm-reader', '-n', 'team']));
    assert.match(role, /configmaps\s+\[\]\s+\[app\]\s+\[get list\]/);
    const crb = ok(await k(['describe', 'clusterrolebinding', 'system:public-info-viewer']));
    assert.match(crb, /Group\s+system:unauthenticated/);
  });

  it('roleRef is immutable and bad rules are rejected with upstream field errors', async () => {
    const patched = await k(['patch', 'rolebinding', 'alice-cm', '-n', 'team', '--type=merge', '-p', '{"roleRef":{"name":"other"}}']);
    assert.notEqual(patched.code, 0);
    assert.match(patched.stderr, /cannot change roleRef/);
    const bad = await request(s.url)
      .post('/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles')
      .send({ metadata: { name: 'bad' }, rules: [{ verbs: [], nonResourceURLs: ['/x'] }, { verbs: ['get'] }] })
      .expect(422);
    assert.equal(
      bad.body.message,
      'Role.rbac.authorization.k8s.io "bad" is invalid: [rules[0].verbs: Required value: verbs must contain at least one value, rules[0].nonResourceURLs: Invalid value: ["/x"]: namespaced rules cannot apply to non-resource URLs, rules[1].apiGroups: Required value: resource rules must supply at least one api group, rules[1].resources: Required value: resource rules must supply at least one resource]',
    );
    const crb = await request(s.url)
      .post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings')
      .send({ metadata: { name: 'x' }, roleRef: { kind: 'Role', name: 'r' }, subjects: [{ kind: 'ServiceAccount', name: 'a' }, { kind: 'Robot', name: 'r' }] })
      .expect(422);
    assert.deepEqual(
      crb.body.details.causes.map((c: { field: string }) => c.field),
      ['roleRef.kind', 'subjects[0].namespace', 'subjects[1].kind'],
    );
  });

  it('kubectl auth can-i and can-i --list (SelfSubjectAccessReview, SelfSubjectRulesReview)', async () => {
    const yes = await k(['auth', 'can-i', 'delete', 'configmaps', '-n', 'team']);
    assert.equal(yes.code, 0, yes.stderr);
    assert.equal(yes.stdout.trim(), 'yes');
    const list = ok(await k(['auth', 'can-i', '--list', '-n', 'team']));
    assert.match(list, /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs\n/);
    assert.match(list, /\n\*\.\*\s+\[\]\s+\[\]\s+\[\*\]\n/);
    assert.match(list, /\n\s+\[\*\]\s+\[\]\s+\[\*\]\n/);
  });
});
