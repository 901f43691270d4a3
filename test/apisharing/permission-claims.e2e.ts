import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { installCrd, widgetCrd } from '../crd/crd-fixtures.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { certificateIdentity, type ClientIdentity, requestAs } from '../support/credentials.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const APIS = '/apis/apis.plinth.dev/v1alpha1';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const CONSUMERS = ['c1', 'c2', 'c3'];
const VIEW = '/services/apiexport/provider/widgets';
const TENANT = 'tenancy.plinth.dev/tenant';

type Obj = { metadata: { name: string; namespace?: string; annotations?: Record<string, string>; resourceVersion?: string }; data?: Record<string, string>; spec?: Record<string, unknown>; status?: Record<string, unknown> };
type Condition = { type: string; status: string; reason: string; message: string };

const SECRETS_CLAIM = { group: '', resource: 'secrets', all: true };
const CONFIGMAPS_CLAIM = { group: '', resource: 'configmaps', resourceSelector: [{ namespace: 'default' }], verbs: ['get', 'list', 'watch', 'create', 'delete'] };
const WIDGETS_CLAIM = { group: 'example.com', resource: 'widgets', all: true, verbs: ['patch', 'update'] };
const CLAIMS = [SECRETS_CLAIM, CONFIGMAPS_CLAIM, WIDGETS_CLAIM];

const exportOf = (permissionClaims?: unknown[]) => ({
  apiVersion: 'apis.plinth.dev/v1alpha1',
  kind: 'APIExport',
  metadata: { name: 'widgets' },
  spec: { resources: [{ group: 'example.com', resource: 'widgets' }], ...(permissionClaims ? { permissionClaims } : {}) },
});

/** The whole body of a watch that ends by its timeout, as events. */
function events(res: request.Response): Array<{ type: string; object: Obj }> {
  const text = String(res.body).trim();
  return text === '' ? [] : text.split('\n').map((l) => JSON.parse(l));
}

function watchBody(req: request.Test): request.Test {
  return req.buffer(true).parse((res, cb) => {
    let text = '';
    res.on('data', (c: Buffer) => (text += c.toString()));
    res.on('end', () => cb(null, text));
  });
}

const named = (items: Obj[]) => items.map((o) => `${o.metadata.annotations?.[TENANT]}/${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort();

/**
 * Permission claims (docs/api-sharing.md): the provider's export claims
 * consumers' Secrets (read), ConfigMaps of namespace `default` (read,
 * create, delete) and writes of its widgets beyond status; c1 accepts
 * every claim (with kubectl), c2 rejects them, c3 never answers. Through
 * its view the provider then reads and writes exactly what c1 granted,
 * nothing of c2 and c3; malformed claims and answers get 422.
 */
describe('APIExport permission claims', () => {
  let s: TestServer;
  let carol: ClientIdentity;
  let controller: ClientIdentity;
  const admin = () => request(s.url);
  const asController = () => requestAs(s.url, controller);

  before(async () => {
    s = await startTestServer('permission-claims');
    for (const t of ['provider', ...CONSUMERS]) await admin().post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: t } }).expect(201);
    carol = await certificateIdentity('carol', ['widget-consumers']);
    controller = await certificateIdentity('widget-controller');
    const P = '/clusters/provider';
    await installCrd(admin(), widgetCrd({ subresources: { status: {} } }), P);
    await admin().post(`${P}${RBAC}/clusterroles`).send({ metadata: { name: 'bind-widgets' }, rules: [{ apiGroups: ['apis.plinth.dev'], resources: ['apiexports'], verbs: ['bind'] }] }).expect(201);
    await admin().post(`${P}${RBAC}/clusterrolebindings`).send({ metadata: { name: 'bind-widgets' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bind-widgets' }, subjects: [{ kind: 'Group', name: 'widget-consumers' }] }).expect(201);
    await admin().post(`${P}${RBAC}/clusterroles`).send({ metadata: { name: 'widgets-view' }, rules: [{ apiGroups: ['apis.plinth.dev'], resources: ['apiexports/content'], resourceNames: ['widgets'], verbs: ['*'] }] }).expect(201);
    await admin().post(`${P}${RBAC}/clusterrolebindings`).send({ metadata: { name: 'widgets-view' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'widgets-view' }, subjects: [{ kind: 'User', name: 'widget-controller' }] }).expect(201);
    for (const t of CONSUMERS) {
      await admin().post(`/clusters/${t}${RBAC}/clusterrolebindings`).send({ metadata: { name: 'carol' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'User', name: 'carol' }] }).expect(201);
      for (const ns of ['default', 'kube-system']) {
        await admin().post(`/clusters/${t}/api/v1/namespaces/${ns}/secrets`).send({ metadata: { name: 'db-password' }, stringData: { password: `secret-of-${t}` } }).expect(201);
        await admin().post(`/clusters/${t}/api/v1/namespaces/${ns}/configmaps`).send({ metadata: { name: 'settings' }, data: { tenant: t } }).expect(201);
      }
    }
  });
  after(async () => s.close());

  it('refuses malformed claims and claims on resources that do not exist with 422 and field causes', async () => {
    const cases: Array<[unknown[], string[]]> = [
      [[{ group: '', resource: 'secretz', all: true }], ['spec.permissionClaims[0].resource']],
      [[{ group: '', resource: 'secrets' }], ['spec.permissionClaims[0]']],
      [[{ group: '', resource: 'secrets', all: true, resourceSelector: [{ name: 'x' }] }], ['spec.permissionClaims[0].resourceSelector']],
      [[{ group: '', resource: 'secrets', resourceSelector: [{}] }], ['spec.permissionClaims[0].resourceSelector[0]']],
      [[{ group: '', resource: 'secrets', all: true, verbs: ['get', 'steal'] }], ['spec.permissionClaims[0].verbs[1]']],
      [[SECRETS_CLAIM, { ...SECRETS_CLAIM, verbs: ['get'] }], ['spec.permissionClaims[1]']],
      [[{ group: 'apis.plinth.dev', resource: 'apibindings', all: true }], ['spec.permissionClaims[0].group']],
      [[{ group: '', resource: 'Secrets!', all: true }], ['spec.permissionClaims[0].resource']],
    ];
    for (const [claims, fields] of cases) {
      const res = await admin().post(`/clusters/provider${APIS}/apiexports`).send(exportOf(claims));
      assert.equal(res.status, 422, `${JSON.stringify(claims)}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.reason, 'Invalid');
      assert.deepEqual(res.body.details.causes.map((c: { field: string }) => c.field), fields, JSON.stringify(res.body));
    }
    const nothing = await admin().get(`/clusters/provider${APIS}/apiexports`).expect(200);
    assert.equal(nothing.body.items.length, 0);
  });

  it('a claim-less export gives the provider 403 on the consumers\' Secrets', async () => {
    await admin().post(`/clusters/provider${APIS}/apiexports`).send(exportOf()).expect(201);
    for (const t of CONSUMERS) {
      const res = await requestAs(s.url, carol).post(`/clusters/${t}${APIS}/apibindings`).send({ apiVersion: 'apis.plinth.dev/v1alpha1', kind: 'APIBinding', metadata: { name: 'widgets' }, spec: { reference: { export: { path: 'provider', name: 'widgets' } } } }).expect(201);
      const applied = (res.body.status.conditions as Condition[]).find((c) => c.type === 'PermissionClaimsApplied');
      assert.equal(applied?.reason, 'NoClaims', JSON.stringify(res.body.status));
      await requestAs(s.url, carol).post(`/clusters/${t}/apis/example.com/v1/namespaces/default/widgets`).send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: `w-${t}` }, spec: { size: 1 } }).expect(201);
    }
    const list = await asController().get(`${VIEW}/clusters/*/api/v1/secrets`).expect(403);
    assert.match(list.body.message, /neither exports nor claims secrets/);
    await asController().get(`${VIEW}/clusters/c1/api/v1/namespaces/default/secrets/db-password`).expect(403);
    await asController().get('/clusters/c1/api/v1/namespaces/default/secrets/db-password').expect(403);
  });

  it('adding claims to the export shows them open on every binding; a wrong answer is 422', async () => {
    const cur = await admin().get(`/clusters/provider${APIS}/apiexports/widgets`).expect(200);
    const bad = await admin().put(`/clusters/provider${APIS}/apiexports/widgets`).send({ ...cur.body, spec: { ...cur.body.spec, permissionClaims: [{ group: 'example.com', resource: 'gadgets', all: true }] } }).expect(422);
    assert.equal(bad.body.details.causes[0].field, 'spec.permissionClaims[0].resource');
    await admin().put(`/clusters/provider${APIS}/apiexports/widgets`).send({ ...cur.body, spec: { ...cur.body.spec, permissionClaims: CLAIMS } }).expect(200);
    for (const t of CONSUMERS) {
      const b = await requestAs(s.url, carol).get(`/clusters/${t}${APIS}/apibindings/widgets`).expect(200);
      assert.equal(b.body.status.exportPermissionClaims.length, 3, JSON.stringify(b.body.status));
      assert.deepEqual(b.body.status.appliedPermissionClaims, []);
      const applied = (b.body.status.conditions as Condition[]).find((c) => c.type === 'PermissionClaimsApplied');
      assert.equal(applied?.status, 'False');
      assert.equal(applied?.reason, 'ClaimsNotAnswered');
      assert.match(applied!.message, /not answered: secrets, configmaps, widgets\.example\.com/);
    }
    // Answers must name a claim exactly as the export makes it, with a known state.
    const asCarol = requestAs(s.url, carol);
    const wrongVerbs = await asCarol
      .patch(`/clusters/c1${APIS}/apibindings/widgets`)
      .set('Content-Type', 'application/merge-patch+json')
      .send({ spec: { permissionClaims: [{ ...SECRETS_CLAIM, verbs: ['delete'], state: 'Accepted' }] } })
      .expect(422);
    assert.equal(wrongVerbs.body.details.causes[0].field, 'spec.permissionClaims[0]');
    assert.match(wrongVerbs.body.message, /makes no such claim on secrets/);
    const wrongState = await asCarol
      .patch(`/clusters/c1${APIS}/apibindings/widgets`)
      .set('Content-Type', 'application/merge-patch+json')
      .send({ spec: { permissionClaims: [{ ...SECRETS_CLAIM, state: 'Maybe' }, { ...CONFIGMAPS_CLAIM }] } })
      .expect(422);
    assert.deepEqual(wrongState.body.details.causes.map((c: { field: string }) => c.field), ['spec.permissionClaims[0].state', 'spec.permissionClaims[1].state']);
  });

  it('c1 accepts every claim with kubectl, c2 rejects them; their bindings say so', async () => {
    const answer = (state: string) => JSON.stringify({ spec: { permissionClaims: CLAIMS.map((c) => ({ ...c, state })) } });
    for (const [t, state] of [['c1', 'Accepted'], ['c2', 'Rejected']]) {
      const kubeconfig = writeTestKubeconfig(`${s.url}/clusters/${t}`, carol);
      const r = await kubectl(kubeconfig, ['patch', 'apibinding', 'widgets', '--type=merge', '-p', answer(state)]);
      assert.equal(r.code, 0, r.stderr);
    }
    const c1 = await requestAs(s.url, carol).get(`/clusters/c1${APIS}/apibindings/widgets`).expect(200);
    assert.equal(c1.body.status.appliedPermissionClaims.length, 3);
    const c1Applied = (c1.body.status.conditions as Condition[]).find((c) => c.type === 'PermissionClaimsApplied');
    assert.equal(c1Applied?.status, 'True');
    assert.equal(c1Applied?.message, 'accepted: secrets, configmaps, widgets.example.com');
    const c2 = await requestAs(s.url, carol).get(`/clusters/c2${APIS}/apibindings/widgets`).expect(200);
    assert.deepEqual(c2.body.status.appliedPermissionClaims, []);
    assert.equal((c2.body.status.conditions as Condition[]).find((c) => c.type === 'PermissionClaimsApplied')?.message, 'rejected: secrets, configmaps, widgets.example.com');
    assert.equal((c2.body.status.conditions as Condition[]).find((c) => c.type === 'PermissionClaimsValid')?.status, 'True');
  });

  it('the provider reads the Secrets of exactly the tenant that accepted, and only reads them', async () => {
    const all = await asController().get(`${VIEW}/clusters/*/api/v1/secrets`).expect(200);
    assert.equal(all.body.kind, 'SecretList');
    assert.deepEqual(named(all.body.items), ['c1/default/db-password', 'c1/kube-system/db-password']);
    await asController().get(`${VIEW}/clusters/c2/api/v1/secrets`).expect(404);
    await asController().get(`${VIEW}/clusters/c3/api/v1/namespaces/default/secrets/db-password`).expect(404);
    const one = await asController().get(`${VIEW}/clusters/c1/api/v1/namespaces/default/secrets/db-password`).expect(200);
    assert.equal(Buffer.from(one.body.data.password, 'base64').toString(), 'secret-of-c1');
    // The claim grants get, list and watch only.
    const write = await asController().patch(`${VIEW}/clusters/c1/api/v1/namespaces/default/secrets/db-password`).set('Content-Type', 'application/merge-patch+json').send({ data: { password: 'eA==' } }).expect(403);
    assert.match(write.body.message, /does not grant verb "patch"/);
    // Still nothing in the consumer tenant itself.
    await asController().get('/clusters/c1/api/v1/namespaces/default/secrets/db-password').expect(403);
  });

  it('a watch of claimed Secrets from a resourceVersion sees the accepting tenant\'s changes only', async () => {
    const listed = await asController().get(`${VIEW}/clusters/*/api/v1/secrets`).expect(200);
    for (const t of ['c2', 'c1', 'c3', 'c1']) {
      await admin().post(`/clusters/${t}/api/v1/namespaces/default/secrets`).send({ metadata: { generateName: 'late-' }, stringData: { k: t } }).expect(201);
    }
    const res = await watchBody(asController().get(`${VIEW}/clusters/*/api/v1/secrets?watch=true&resourceVersion=${listed.body.metadata.resourceVersion}&timeoutSeconds=1`));
    const seen = events(res);
    assert.equal(seen.length, 2, JSON.stringify(seen));
    assert.ok(seen.every((e) => e.type === 'ADDED' && e.object.metadata.annotations?.[TENANT] === 'c1' && e.object.metadata.name.startsWith('late-')));
  });

  it('the claimed ConfigMaps: selected namespace only, created and deleted in the accepting tenant', async () => {
    const all = await asController().get(`${VIEW}/clusters/*/api/v1/configmaps`).expect(200);
    assert.deepEqual(named(all.body.items), ['c1/default/kube-root-ca.crt', 'c1/default/settings']);
    await asController().get(`${VIEW}/clusters/c1/api/v1/namespaces/kube-system/configmaps/settings`).expect(404);
    const created = await asController().post(`${VIEW}/clusters/c1/api/v1/namespaces/default/configmaps`).send({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-provider' }, data: { hello: 'c1' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.metadata.name, 'from-provider');
    const inC1 = await requestAs(s.url, carol).get('/clusters/c1/api/v1/namespaces/default/configmaps/from-provider').expect(200);
    assert.equal(inC1.body.data.hello, 'c1');
    // Outside the selector, in a tenant that rejected, a verb not claimed:
    await asController().post(`${VIEW}/clusters/c1/api/v1/namespaces/kube-system/configmaps`).send({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-provider' } }).expect(403);
    await asController().post(`${VIEW}/clusters/c2/api/v1/namespaces/default/configmaps`).send({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-provider' } }).expect(404);
    await asController().put(`${VIEW}/clusters/c1/api/v1/namespaces/default/configmaps/from-provider`).send({ ...inC1.body, data: { hello: 'again' } }).expect(403);
    await asController().delete(`${VIEW}/clusters/c1/api/v1/namespaces/default/configmaps/from-provider`).expect(200);
    await requestAs(s.url, carol).get('/clusters/c1/api/v1/namespaces/default/configmaps/from-provider').expect(404);
  });

  it('a claim on the exported resource lifts the status-only rule in the accepting tenant only', async () => {
    const patch = (t: string) => asController().patch(`${VIEW}/clusters/${t}/apis/example.com/v1/namespaces/default/widgets/w-${t}`).set('Content-Type', 'application/merge-patch+json').send({ spec: { size: 7 } });
    const ok = await patch('c1').expect(200);
    assert.equal(ok.body.spec.size, 7);
    const inC1 = await requestAs(s.url, carol).get('/clusters/c1/apis/example.com/v1/namespaces/default/widgets/w-c1').expect(200);
    assert.equal(inC1.body.spec.size, 7);
    for (const t of ['c2', 'c3']) {
      const res = await patch(t).expect(403);
      assert.match(res.body.message, /writes the status subresource of bound objects only/);
    }
    // The claim grants patch and update, not create or delete.
    await asController().delete(`${VIEW}/clusters/c1/apis/example.com/v1/namespaces/default/widgets/w-c1`).expect(403);
  });

  it('a claim rejected after acceptance hides the tenant again; the export dropping a claim leaves the answer stale', async () => {
    const asCarol = requestAs(s.url, carol);
    await asCarol
      .patch(`/clusters/c1${APIS}/apibindings/widgets`)
      .set('Content-Type', 'application/merge-patch+json')
      .send({ spec: { permissionClaims: [{ ...SECRETS_CLAIM, state: 'Rejected' }, { ...CONFIGMAPS_CLAIM, state: 'Accepted' }, { ...WIDGETS_CLAIM, state: 'Accepted' }] } })
      .expect(200);
    await asController().get(`${VIEW}/clusters/c1/api/v1/secrets`).expect(404);
    const none = await asController().get(`${VIEW}/clusters/*/api/v1/secrets`).expect(200);
    assert.deepEqual(none.body.items, []);
    // The provider narrows its ConfigMaps claim: c1's answer no longer matches, the view no longer grants it.
    const cur = await admin().get(`/clusters/provider${APIS}/apiexports/widgets`).expect(200);
    await admin().put(`/clusters/provider${APIS}/apiexports/widgets`).send({ ...cur.body, spec: { ...cur.body.spec, permissionClaims: [SECRETS_CLAIM, { ...CONFIGMAPS_CLAIM, verbs: ['get'] }, WIDGETS_CLAIM] } }).expect(200);
    await asController().get(`${VIEW}/clusters/c1/api/v1/namespaces/default/configmaps/settings`).expect(404);
    const c1 = await asCarol.get(`/clusters/c1${APIS}/apibindings/widgets`).expect(200);
    const valid = (c1.body.status.conditions as Condition[]).find((c) => c.type === 'PermissionClaimsValid');
    assert.equal(valid?.status, 'False');
    assert.match(valid!.message, /configmaps/);
    assert.deepEqual(c1.body.status.appliedPermissionClaims.map((c: { resource: string }) => c.resource), ['widgets']);
  });
});
