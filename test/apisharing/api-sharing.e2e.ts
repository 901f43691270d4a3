import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { CustomObjectsApi, type KubernetesListObject, type KubernetesObject, makeInformer } from '@kubernetes/client-node';
import { installCrd, widgetCrd } from '../crd/crd-fixtures.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { certificateIdentity, type ClientIdentity, requestAs } from '../support/credentials.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { testKubeConfig } from '../support/client-node.js';
import { eventually } from '../support/eventually.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const APIS = '/apis/apis.plinth.dev/v1alpha1';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const CONSUMERS = ['c1', 'c2', 'c3'];
const VIEW = '/services/apiexport/provider/widgets';

type Widget = KubernetesObject & { spec?: { size?: number }; status?: { phase?: string } };

const binding = (name: string, exportName = 'widgets', path = 'provider') => ({
  apiVersion: 'apis.plinth.dev/v1alpha1',
  kind: 'APIBinding',
  metadata: { name },
  spec: { reference: { export: { path, name: exportName } } },
});

const widgetYaml = (name: string, size: number) => `apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  size: ${size}\n`;

/**
 * APIs shared across tenants (docs/api-sharing.md): tenant `provider`
 * exports widgets.example.com, tenants c1..c3 bind it and create widgets
 * with kubectl, the provider's informer on the export's view sees exactly
 * theirs, each with its tenant, and writes their status; `loner` did not
 * bind and is never seen; bad bindings are refused with 403/404/409.
 */
describe('APIExport and APIBinding across tenants', () => {
  let s: TestServer;
  let carol: ClientIdentity;
  let controller: ClientIdentity;
  let dave: ClientIdentity;
  const admin = () => request(s.url);

  before(async () => {
    s = await startTestServer('api-sharing');
    for (const t of ['provider', ...CONSUMERS, 'loner']) await admin().post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: t } }).expect(201);
    carol = await certificateIdentity('carol', ['widget-consumers']);
    controller = await certificateIdentity('widget-controller');
    dave = await certificateIdentity('dave');
    const P = '/clusters/provider';
    await installCrd(admin(), widgetCrd({ subresources: { status: {} } }), P);
    // The provider grants `bind` to the consumers' group and the view's verbs to its controller (kcp's verbs).
    await admin().post(`${P}${RBAC}/clusterroles`).send({ metadata: { name: 'bind-widgets' }, rules: [{ apiGroups: ['apis.plinth.dev'], resources: ['apiexports'], verbs: ['bind'] }] }).expect(201);
    await admin().post(`${P}${RBAC}/clusterrolebindings`).send({ metadata: { name: 'bind-widgets' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bind-widgets' }, subjects: [{ kind: 'Group', name: 'widget-consumers' }] }).expect(201);
    await admin().post(`${P}${RBAC}/clusterroles`).send({ metadata: { name: 'widgets-view' }, rules: [{ apiGroups: ['apis.plinth.dev'], resources: ['apiexports/content'], resourceNames: ['widgets'], verbs: ['get', 'list', 'watch', 'update', 'patch'] }] }).expect(201);
    await admin().post(`${P}${RBAC}/clusterrolebindings`).send({ metadata: { name: 'widgets-view' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'widgets-view' }, subjects: [{ kind: 'User', name: 'widget-controller' }] }).expect(201);
    // carol administers the consumers (and loner's dave), nothing in the provider but `bind`.
    for (const t of CONSUMERS) {
      await admin().post(`/clusters/${t}${RBAC}/clusterrolebindings`).send({ metadata: { name: 'carol' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'User', name: 'carol' }] }).expect(201);
      await admin().post(`/clusters/${t}/api/v1/namespaces/default/secrets`).send({ metadata: { name: 'db-password' }, stringData: { password: `secret-of-${t}` } }).expect(201);
    }
    await admin().post(`/clusters/loner${RBAC}/clusterrolebindings`).send({ metadata: { name: 'dave' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'User', name: 'dave' }] }).expect(201);
  });
  after(async () => s.close());

  it('creates an APIExport whose status names its view', async () => {
    const res = await admin()
      .post(`/clusters/provider${APIS}/apiexports`)
      .send({ apiVersion: 'apis.plinth.dev/v1alpha1', kind: 'APIExport', metadata: { name: 'widgets' }, spec: { resources: [{ group: 'example.com', resource: 'widgets' }] } })
      .expect(201);
    assert.ok(String(res.body.status?.virtualWorkspaces?.[0]?.url).endsWith(VIEW), JSON.stringify(res.body.status));
  });

  it('refuses a binding the provider did not grant (403), a missing export (404) and a conflict with a CRD (409)', async () => {
    const asDave = requestAs(s.url, dave);
    const forbidden = await asDave.post(`/clusters/loner${APIS}/apibindings`).send(binding('widgets')).expect(403);
    assert.match(forbidden.body.message, /cannot bind apiexports\.apis\.plinth\.dev "widgets" of tenant "provider"/);
    const asCarol = requestAs(s.url, carol);
    const missing = await asCarol.post(`/clusters/c1${APIS}/apibindings`).send(binding('nope', 'nope')).expect(404);
    assert.equal(missing.body.reason, 'NotFound');
    // loner has a widgets.example.com CRD of its own: binding the export there conflicts.
    await installCrd(admin(), widgetCrd(), '/clusters/loner');
    const clash = await admin().post(`/clusters/loner${APIS}/apibindings`).send(binding('widgets')).expect(409);
    assert.match(clash.body.message, /served by a CustomResourceDefinition of this tenant/);
    await admin().post('/clusters/loner/apis/example.com/v1/namespaces/default/widgets').send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'lonely' }, spec: { size: 1 } }).expect(201);
  });

  it('binds the export in three tenants, which then serve widgets as their own', async () => {
    const asCarol = requestAs(s.url, carol);
    for (const t of CONSUMERS) {
      const res = await asCarol.post(`/clusters/${t}${APIS}/apibindings`).send(binding('widgets')).expect(201);
      assert.equal(res.body.status?.phase, 'Bound', JSON.stringify(res.body.status));
      assert.deepEqual(res.body.status.boundResources.map((r: { group: string; resource: string }) => `${r.resource}.${r.group}`), ['widgets.example.com']);
    }
    // Discovery and OpenAPI show the provider's schema; the consumer has no CRD of it and cannot create one.
    const disco = await asCarol.get('/clusters/c1/apis/example.com/v1').expect(200);
    assert.ok(disco.body.resources.some((r: { name: string }) => r.name === 'widgets'));
    const crds = await asCarol.get('/clusters/c1/apis/apiextensions.k8s.io/v1/customresourcedefinitions').expect(200);
    assert.equal(crds.body.items.length, 0);
    const clash = await asCarol.post('/clusters/c1/apis/apiextensions.k8s.io/v1/customresourcedefinitions').send(widgetCrd()).expect(409);
    assert.match(clash.body.message, /served by APIBinding "widgets"/);
    // The provider's schema validates the consumer's objects.
    const bad = await asCarol.post('/clusters/c1/apis/example.com/v1/namespaces/default/widgets').send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'huge' }, spec: { size: 99 } }).expect(422);
    assert.match(bad.body.message, /spec\.size/);
    // A bound export cannot be deleted.
    const del = await admin().delete(`/clusters/provider${APIS}/apiexports/widgets`).expect(409);
    assert.match(del.body.message, /bound by 3 tenant/);
  });

  it('the provider\'s informer sees exactly the consumers\' widgets, with their tenant, and writes their status', async () => {
    const kc = testKubeConfig(`${s.url}${VIEW}/clusters/*`, controller);
    const objects = kc.makeApiClient(CustomObjectsApi);
    const list = async () => (await objects.listClusterCustomObject({ group: 'example.com', version: 'v1', plural: 'widgets' })) as KubernetesListObject<Widget>;
    const informer = makeInformer<Widget>(kc, '/apis/example.com/v1/widgets', list);
    const seen: string[] = [];
    informer.on('add', (o) => seen.push(`add ${o.metadata?.annotations?.['tenancy.plinth.dev/tenant']}/${o.metadata?.name}`));
    informer.on('update', (o) => seen.push(`update ${o.metadata?.annotations?.['tenancy.plinth.dev/tenant']}/${o.metadata?.name} ${o.status?.phase ?? ''}`));
    informer.on('error', () => undefined);
    await informer.start();
    try {
      // c1 has a widget before the informer's first list; c2 and c3 get theirs while it watches.
      for (const [i, t] of CONSUMERS.entries()) {
        const kubeconfig = writeTestKubeconfig(`${s.url}/clusters/${t}`, carol);
        const r = await kubectl(kubeconfig, ['apply', '-f', '-'], widgetYaml(`w-${t}`, i + 1));
        assert.equal(r.code, 0, r.stderr);
        const got = await kubectl(kubeconfig, ['get', 'widgets', '-n', 'default', '-o', 'name']);
        assert.equal(got.stdout.trim(), `widget.example.com/w-${t}`);
      }
      await eventually(async () => informer.list().length === 3, { timeoutMs: 10000, message: 'three widgets in the informer' });
      const byTenant = informer
        .list()
        .map((o) => `${o.metadata?.annotations?.['tenancy.plinth.dev/tenant']}/${o.metadata?.name}`)
        .sort();
      assert.deepEqual(byTenant, ['c1/w-c1', 'c2/w-c2', 'c3/w-c3']);
      assert.ok(!seen.some((e) => e.includes('lonely')));
      // Status through the view, one tenant's object at a time.
      const asController = requestAs(s.url, controller);
      for (const t of CONSUMERS) {
        await asController
          .patch(`${VIEW}/clusters/${t}/apis/example.com/v1/namespaces/default/widgets/w-${t}/status`)
          .set('Content-Type', 'application/merge-patch+json')
          .send({ status: { phase: 'Ready' } })
          .expect(200);
      }
      await eventually(async () => CONSUMERS.every((t) => seen.includes(`update ${t}/w-${t} Ready`)), { timeoutMs: 10000, message: 'status updates seen' });
      const inC2 = await requestAs(s.url, carol).get('/clusters/c2/apis/example.com/v1/namespaces/default/widgets/w-c2').expect(200);
      assert.equal(inC2.body.status.phase, 'Ready');
      // Only status: the spec of a consumer's object is not the provider's to write.
      await asController
        .patch(`${VIEW}/clusters/c1/apis/example.com/v1/namespaces/default/widgets/w-c1`)
        .set('Content-Type', 'application/merge-patch+json')
        .send({ spec: { size: 5 } })
        .expect(403);
    } finally {
      await informer.stop();
    }
  });

  it('a watch resumes from any event\'s resourceVersion across tenants without missing or repeating', async () => {
    const asController = requestAs(s.url, controller);
    const listed = await asController.get(`${VIEW}/clusters/*/apis/example.com/v1/widgets`).expect(200);
    const rv = listed.body.metadata.resourceVersion;
    const asCarol = requestAs(s.url, carol);
    for (const t of ['c3', 'c1', 'c2']) {
      await asCarol.post(`/clusters/${t}/apis/example.com/v1/namespaces/default/widgets`).send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: `late-${t}` }, spec: { size: 2 } }).expect(201);
    }
    await admin().post('/clusters/loner/apis/example.com/v1/namespaces/default/widgets').send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'late-loner' }, spec: { size: 2 } }).expect(201);
    const all = await asController.get(`${VIEW}/clusters/*/apis/example.com/v1/widgets?watch=true&resourceVersion=${rv}&timeoutSeconds=1`).buffer(true).parse((res, cb) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => cb(null, text));
    });
    const events = String(all.body).trim().split('\n').map((l) => JSON.parse(l) as { type: string; object: Widget });
    assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata?.annotations?.['tenancy.plinth.dev/tenant']}/${e.object.metadata?.name}`), ['ADDED c3/late-c3', 'ADDED c1/late-c1', 'ADDED c2/late-c2']);
    // resourceVersions are the view's cursors (docs/api-sharing.md): opaque, one per event.
    const rvs = events.map((e) => String(e.object.metadata?.resourceVersion));
    assert.equal(new Set(rvs).size, 3);
    // From the first event's resourceVersion: exactly the two after it.
    const resumed = await asController.get(`${VIEW}/clusters/*/apis/example.com/v1/widgets?watch=true&resourceVersion=${encodeURIComponent(rvs[0])}&timeoutSeconds=1`).buffer(true).parse((res, cb) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => cb(null, text));
    });
    assert.deepEqual(String(resumed.body).trim().split('\n').map((l) => (JSON.parse(l) as { object: Widget }).object.metadata?.name), ['late-c1', 'late-c2']);
  });

  it('the provider sees nothing of tenants that did not bind, nor the consumers\' other resources', async () => {
    const asController = requestAs(s.url, controller);
    await asController.get(`${VIEW}/clusters/loner/apis/example.com/v1/widgets`).expect(404);
    const one = await asController.get(`${VIEW}/clusters/c2/apis/example.com/v1/widgets`).expect(200);
    assert.deepEqual(one.body.items.map((o: Widget) => o.metadata?.name).sort(), ['late-c2', 'w-c2']);
    // Secrets are neither exported nor claimed: 403 through the view (test/apisharing/permission-claims.e2e.ts grants them), 403 in the consumer tenant.
    await asController.get(`${VIEW}/clusters/c1/api/v1/secrets`).expect(403);
    await asController.get(`${VIEW}/clusters/c1/api/v1/namespaces/default/secrets/db-password`).expect(403);
    await asController.get('/clusters/c1/api/v1/namespaces/default/secrets/db-password').expect(403);
    // Another user of the platform without the view's verbs.
    await requestAs(s.url, dave).get(`${VIEW}/clusters/*/apis/example.com/v1/widgets`).expect(403);
    // The tenant that did not bind sees nothing of the export.
    const own = await admin().get('/clusters/loner/apis/example.com/v1/widgets').expect(200);
    assert.deepEqual(own.body.items.map((o: Widget) => o.metadata?.name).sort(), ['late-loner', 'lonely']);
  });
});
