import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { CoreV1Api, makeInformer, type V1Namespace } from '@kubernetes/client-node';
import { installCrd, widgetCrd } from '../crd/crd-fixtures.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { certificateIdentity, type ClientIdentity, requestAs, tokenIdentity } from '../support/credentials.js';
import { testKubeConfig } from '../support/client-node.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { eventually } from '../support/eventually.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const VIEW = '/services/platform';
const TENANT = 'tenancy.plinth.dev/tenant';

type Obj = { kind?: string; apiVersion?: string; metadata: { name: string; namespace?: string; annotations?: Record<string, string>; resourceVersion?: string }; data?: Record<string, string>; type?: string };

function watchBody(req: request.Test): request.Test {
  return req.buffer(true).parse((res, cb) => {
    let text = '';
    res.on('data', (c: Buffer) => (text += c.toString()));
    res.on('end', () => cb(null, text));
  });
}

const named = (items: Obj[]) => items.map((o) => `${o.metadata.annotations?.[TENANT]}/${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`).sort();

/**
 * The platform's view (docs/api-sharing.md): the platform's administrators
 * list and watch any built-in resource of every tenant through
 * `/services/platform/clusters/*`, each object annotated with its tenant,
 * Secrets as metadata unless `tenants/secrets` is granted too; RBAC of the
 * platform scope decides, so tenants' own identities get 403.
 */
describe('the platform view across tenants', () => {
  let s: TestServer;
  let inventory: ClientIdentity;
  let auditor: ClientIdentity;
  let ops: ClientIdentity;
  let alice: ClientIdentity;
  let bot: ClientIdentity;
  const admin = () => request(s.url);

  const grant = async (name: string, user: string, rules: unknown[]) => {
    await admin().post(`${RBAC}/clusterroles`).send({ metadata: { name }, rules }).expect(201);
    await admin().post(`${RBAC}/clusterrolebindings`).send({ metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects: [{ kind: 'User', name: user }] }).expect(201);
  };

  before(async () => {
    s = await startTestServer('platform-view');
    for (const t of ['t1', 't2']) {
      await admin().post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: t }, spec: { owners: [{ kind: 'User', name: 'alice' }] } }).expect(201);
      await admin().post(`/clusters/${t}/api/v1/namespaces/default/secrets`).send({ metadata: { name: 'db-password' }, stringData: { password: `secret-of-${t}` } }).expect(201);
    }
    inventory = await certificateIdentity('inventory');
    auditor = await certificateIdentity('t1-auditor');
    ops = await certificateIdentity('ops');
    alice = await certificateIdentity('alice');
    await grant('platform-inventory', 'inventory', [{ apiGroups: ['tenancy.plinth.dev'], resources: ['tenants/content'], verbs: ['get', 'list', 'watch'] }]);
    await grant('t1-auditor', 't1-auditor', [{ apiGroups: ['tenancy.plinth.dev'], resources: ['tenants/content'], resourceNames: ['t1'], verbs: ['get', 'list', 'watch'] }]);
    await grant('platform-ops', 'ops', [{ apiGroups: ['tenancy.plinth.dev'], resources: ['tenants/content', 'tenants/secrets'], verbs: ['get', 'list', 'watch'] }]);
    // A tenant's own identity: a ServiceAccount token of t1, and alice, who owns (cluster-admin of) t1 and t2.
    await admin().post('/clusters/t1/api/v1/namespaces/default/serviceaccounts').send({ metadata: { name: 'bot' } }).expect(201);
    const token = await admin().post('/clusters/t1/api/v1/namespaces/default/serviceaccounts/bot/token').send({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} }).expect(201);
    bot = tokenIdentity(token.body.status.token);
  });
  after(async () => s.close());

  it('lists every tenant\'s namespaces in one list, each with its tenant', async () => {
    const res = await requestAs(s.url, inventory).get(`${VIEW}/clusters/*/api/v1/namespaces`).expect(200);
    assert.equal(res.body.kind, 'NamespaceList');
    // A cursor across shards (docs/api-sharing.md), not one shard's revision.
    assert.doesNotMatch(res.body.metadata.resourceVersion, /^\d*$/);
    const names = named(res.body.items);
    for (const t of ['default', 't1', 't2']) for (const ns of ['default', 'kube-system']) assert.ok(names.includes(`${t}/${ns}`), names.join(' '));
    const one = await requestAs(s.url, inventory).get(`${VIEW}/clusters/t2/api/v1/namespaces`).expect(200);
    assert.ok(named(one.body.items).every((n) => n.startsWith('t2/')));
    const got = await requestAs(s.url, inventory).get(`${VIEW}/clusters/t1/api/v1/namespaces/kube-system`).expect(200);
    assert.equal(got.body.metadata.annotations[TENANT], 't1');
    // kubectl with the inventory's credentials (the view serves no discovery: raw paths).
    const r = await kubectl(writeTestKubeconfig(s.url, inventory), ['get', '--raw', `${VIEW}/clusters/*/api/v1/namespaces`]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(named(JSON.parse(r.stdout).items), names);
  });

  it('serves Secrets as metadata only, unless tenants/secrets is granted too', async () => {
    const meta = await requestAs(s.url, inventory).get(`${VIEW}/clusters/*/api/v1/secrets`).expect(200);
    assert.equal(meta.body.kind, 'PartialObjectMetadataList');
    assert.equal(meta.body.apiVersion, 'meta.k8s.io/v1');
    assert.deepEqual(named(meta.body.items).filter((n) => n.endsWith('/db-password')), ['t1/default/db-password', 't2/default/db-password']);
    for (const o of meta.body.items as Obj[]) {
      assert.equal(o.kind, 'PartialObjectMetadata');
      assert.equal(o.data, undefined);
    }
    const one = await requestAs(s.url, inventory).get(`${VIEW}/clusters/t1/api/v1/namespaces/default/secrets/db-password`).expect(200);
    assert.equal(one.body.kind, 'PartialObjectMetadata');
    assert.equal(one.body.data, undefined);
    const full = await requestAs(s.url, ops).get(`${VIEW}/clusters/*/api/v1/secrets`).expect(200);
    assert.equal(full.body.kind, 'SecretList');
    const t2 = (full.body.items as Obj[]).find((o) => o.metadata.annotations?.[TENANT] === 't2' && o.metadata.name === 'db-password');
    assert.equal(Buffer.from(t2!.data!.password, 'base64').toString(), 'secret-of-t2');
  });

  it('a watch from a list\'s resourceVersion gives every tenant\'s later changes once, in commit order', async () => {
    const listed = await requestAs(s.url, inventory).get(`${VIEW}/clusters/*/api/v1/namespaces`).expect(200);
    for (const [t, ns] of [['t2', 'late-a'], ['t1', 'late-b'], ['default', 'late-c']]) {
      await admin().post(`/clusters/${t}/api/v1/namespaces`).send({ metadata: { name: ns } }).expect(201);
    }
    const res = await watchBody(requestAs(s.url, inventory).get(`${VIEW}/clusters/*/api/v1/namespaces?watch=true&resourceVersion=${listed.body.metadata.resourceVersion}&timeoutSeconds=1`));
    const events = String(res.body).trim().split('\n').map((l) => JSON.parse(l) as { type: string; object: Obj });
    assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.annotations?.[TENANT]}/${e.object.metadata.name}`), ['ADDED t2/late-a', 'ADDED t1/late-b', 'ADDED default/late-c']);
    // Each event's resourceVersion is the view's cursor after it: opaque, one per event.
    assert.equal(new Set(events.map((e) => e.object.metadata.resourceVersion)).size, 3);
    // Secrets' watch events are metadata only too.
    const secrets = await requestAs(s.url, inventory).get(`${VIEW}/clusters/*/api/v1/secrets`).expect(200);
    await admin().post('/clusters/t2/api/v1/namespaces/default/secrets').send({ metadata: { name: 'late' }, stringData: { k: 'v' } }).expect(201);
    const sw = await watchBody(requestAs(s.url, inventory).get(`${VIEW}/clusters/*/api/v1/secrets?watch=true&resourceVersion=${secrets.body.metadata.resourceVersion}&timeoutSeconds=1`));
    const [event] = String(sw.body).trim().split('\n').map((l) => JSON.parse(l) as { type: string; object: Obj });
    assert.equal(event.object.kind, 'PartialObjectMetadata');
    assert.equal(event.object.metadata.name, 'late');
    assert.equal(event.object.data, undefined);
  });

  it('a client-node informer on the view sees a namespace created in any tenant, a new tenant included', async () => {
    const kc = testKubeConfig(`${s.url}${VIEW}/clusters/*`, inventory);
    const core = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer<V1Namespace>(kc, '/api/v1/namespaces', () => core.listNamespace());
    informer.on('error', () => undefined);
    await informer.start();
    try {
      const key = (o: V1Namespace) => `${o.metadata?.annotations?.[TENANT]}/${o.metadata?.name}`;
      assert.ok(informer.list().some((o) => key(o) === 't1/late-b'));
      await admin().post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 't3' } }).expect(201);
      await admin().post('/clusters/t3/api/v1/namespaces').send({ metadata: { name: 'brand-new' } }).expect(201);
      await eventually(() => informer.list().some((o) => key(o) === 't3/brand-new'), { message: 'the new tenant\'s namespace in the informer' });
    } finally {
      await informer.stop();
    }
  });

  it('refuses tenants\' identities (401 for credentials issued in a tenant, 403 for their owners) and tenants outside resourceNames (403)', async () => {
    // alice owns t1 and t2, with no grant in the platform scope.
    const res = await requestAs(s.url, alice).get(`${VIEW}/clusters/*/api/v1/namespaces`).expect(403);
    assert.match(res.body.message, /cannot list resource "tenants\/content"/);
    await requestAs(s.url, alice).get(`${VIEW}/clusters/t1/api/v1/namespaces`).expect(403);
    // A ServiceAccount token of t1 is no credential in the platform scope at all (docs/authentication.md).
    await requestAs(s.url, bot).get(`${VIEW}/clusters/*/api/v1/namespaces`).expect(401);
    await requestAs(s.url, bot).get(`${VIEW}/clusters/t1/api/v1/namespaces`).expect(401);
    await requestAs(s.url, bot).get('/clusters/t1/api/v1/namespaces/default/serviceaccounts/bot').expect(403);
    // alice administers t1 itself, where the view is not served (it is the platform's).
    await requestAs(s.url, alice).get('/clusters/t1/api/v1/namespaces').expect(200);
    await requestAs(s.url, auditor).get(`${VIEW}/clusters/t1/api/v1/namespaces`).expect(200);
    await requestAs(s.url, auditor).get(`${VIEW}/clusters/t2/api/v1/namespaces`).expect(403);
    await requestAs(s.url, auditor).get(`${VIEW}/clusters/*/api/v1/namespaces`).expect(403);
  });

  it('is read-only, and answers 404 for tenants and resources that do not exist', async () => {
    await requestAs(s.url, ops).post(`${VIEW}/clusters/t1/api/v1/namespaces`).send({ metadata: { name: 'x' } }).expect(403);
    await admin().post(`${VIEW}/clusters/t1/api/v1/namespaces`).send({ metadata: { name: 'x' } }).expect(405);
    await admin().delete(`${VIEW}/clusters/t1/api/v1/namespaces/late-b`).expect(405);
    await requestAs(s.url, inventory).get(`${VIEW}/clusters/nope/api/v1/namespaces`).expect(404);
    await requestAs(s.url, inventory).get(`${VIEW}/clusters/*/api/v1/nothings`).expect(404);
    await requestAs(s.url, inventory).get(`${VIEW}/clusters/t1/api/v1/namespaces/default/secrets/nope`).expect(404);
    // A custom resource: one tenant's schema, so one tenant at a time.
    await installCrd(admin(), widgetCrd(), '/clusters/t1');
    await admin().post('/clusters/t1/apis/example.com/v1/namespaces/default/widgets').send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } }).expect(201);
    const one = await requestAs(s.url, inventory).get(`${VIEW}/clusters/t1/apis/example.com/v1/widgets`).expect(200);
    assert.deepEqual(named(one.body.items), ['t1/default/w']);
    const across = await requestAs(s.url, inventory).get(`${VIEW}/clusters/*/apis/example.com/v1/widgets`).expect(404);
    assert.match(across.body.message, /name one tenant/);
  });
});
