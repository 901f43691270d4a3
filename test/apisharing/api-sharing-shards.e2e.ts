import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { CustomObjectsApi, type KubernetesListObject, type KubernetesObject, makeInformer, Watch } from '@kubernetes/client-node';
import { installCrd, widgetCrd } from '../crd/crd-fixtures.js';
import { startTestServerOn, type TestServer } from '../support/test-server.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { TestPostgres } from '../support/test-postgres.js';
import { certificateIdentity, type ClientIdentity, requestAs } from '../support/credentials.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { testKubeConfig } from '../support/client-node.js';
import { eventually } from '../support/eventually.js';
import { query, waitShardReady } from '../shards/support/shards.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const APIS = '/apis/apis.plinth.dev/v1alpha1';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const VIEW = '/services/apiexport/provider/widgets';
const ALL = `${VIEW}/clusters/*/apis/example.com/v1/widgets`;
const TENANT = 'tenancy.plinth.dev/tenant';
/** Where each tenant lives: the platform's shard `default`, and shard `b` (a PostgreSQL server of this test's own). */
const PLACEMENT: Record<string, string> = { provider: 'default', c1: 'default', c2: 'b', c3: 'b', loner: 'b' };
const CONSUMERS = ['c1', 'c2', 'c3'];

type Widget = KubernetesObject & { spec?: { size?: number }; status?: { phase?: string } };

const widgetYaml = (name: string, size: number, labels: Record<string, string> = {}) =>
  `apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: ${name}\n  namespace: default\n  labels: ${JSON.stringify(labels)}\nspec:\n  size: ${size}\n`;

const rb = (name: string, role: string, subject: { kind: string; name: string }) => ({
  metadata: { name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
  subjects: [subject],
});

/** The lines of a watch that ends by itself (timeoutSeconds) or when the server ends it. */
async function watchLines(req: request.Test): Promise<{ status: number; events: { type: string; object: Widget & { code?: number } }[] }> {
  const res = await req.buffer(true).parse((r, cb) => {
    let text = '';
    r.on('data', (c: Buffer) => (text += c.toString()));
    r.on('end', () => cb(null, text));
  });
  const text = String(res.body ?? '').trim();
  return { status: res.status, events: text ? text.split('\n').map((l) => JSON.parse(l)) : [] };
}

const who = (o: Widget) => `${o.metadata?.annotations?.[TENANT]}/${o.metadata?.name}`;

/**
 * The provider's view across shards (docs/api-sharing.md): three consumer
 * tenants on two PostgreSQL servers bind the export; the provider's
 * client-node informer sees exactly their widgets through one list and one
 * watch whose resourceVersions are cursors of per-shard revisions, resumes
 * after a server restart without missing or repeating an event, pages and
 * selects across shards, leaves a tenant whose binding is deleted, and a
 * shard that is down makes the view answer 503 at once.
 */
describe('the provider\'s view across shards', { timeout: 170_000 }, () => {
  let s: TestServer;
  let db: TestDatabase;
  let b: TestPostgres;
  let env: Record<string, string>;
  let carol: ClientIdentity;
  let controller: ClientIdentity;
  const admin = () => request(s.url);
  const asCarol = () => requestAs(s.url, carol);
  const asController = () => requestAs(s.url, controller);
  const k = (tenant: string, args: string[], input?: string) => kubectl(writeTestKubeconfig(`${s.url}/clusters/${tenant}`, carol), args, input);

  // The informer, kept across the tests: what it reported, and whether it may watch again after an error.
  const log: string[] = [];
  let resumable = true;
  let informer: ReturnType<typeof makeInformer<Widget>>;
  // client-node's informer is a ListWatch, which says which resourceVersion it would watch from.
  const latestResourceVersion = () => (informer as unknown as { latestResourceVersion(): string }).latestResourceVersion();

  before(async () => {
    b = await TestPostgres.start('view_b');
    db = await createTestDatabase('api_sharing_shards');
    env = { PLINTH_SHARDS: `b=${b.url}` };
    s = await startTestServerOn(db, env);
    env.PORT = new URL(s.url).port;
    await waitShardReady(s.url, 'b');
    for (const [t, shard] of Object.entries(PLACEMENT)) {
      const made = await admin().post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: t }, spec: { shard } }).expect(201);
      assert.equal(made.body.status.shard, shard);
    }
    carol = await certificateIdentity('carol', ['widget-consumers']);
    controller = await certificateIdentity('widget-controller');
    const P = '/clusters/provider';
    await installCrd(admin(), widgetCrd({ subresources: { status: {} } }), P);
    await admin().post(`${P}${RBAC}/clusterroles`).send({ metadata: { name: 'bind-widgets' }, rules: [{ apiGroups: ['apis.plinth.dev'], resources: ['apiexports'], verbs: ['bind'] }] }).expect(201);
    await admin().post(`${P}${RBAC}/clusterrolebindings`).send(rb('bind-widgets', 'bind-widgets', { kind: 'Group', name: 'widget-consumers' })).expect(201);
    await admin().post(`${P}${RBAC}/clusterroles`).send({ metadata: { name: 'widgets-view' }, rules: [{ apiGroups: ['apis.plinth.dev'], resources: ['apiexports/content'], resourceNames: ['widgets'], verbs: ['get', 'list', 'watch', 'update', 'patch'] }] }).expect(201);
    await admin().post(`${P}${RBAC}/clusterrolebindings`).send(rb('widgets-view', 'widgets-view', { kind: 'User', name: 'widget-controller' })).expect(201);
    for (const t of [...CONSUMERS, 'loner']) await admin().post(`/clusters/${t}${RBAC}/clusterrolebindings`).send(rb('carol', 'cluster-admin', { kind: 'User', name: 'carol' })).expect(201);
    await admin().post(`${P}${APIS}/apiexports`).send({ apiVersion: 'apis.plinth.dev/v1alpha1', kind: 'APIExport', metadata: { name: 'widgets' }, spec: { resources: [{ group: 'example.com', resource: 'widgets' }] } }).expect(201);
    for (const t of CONSUMERS) {
      const res = await asCarol().post(`/clusters/${t}${APIS}/apibindings`).send({ apiVersion: 'apis.plinth.dev/v1alpha1', kind: 'APIBinding', metadata: { name: 'widgets' }, spec: { reference: { export: { path: 'provider', name: 'widgets' } } } }).expect(201);
      assert.equal(res.body.status?.phase, 'Bound');
    }
    // loner (on shard b, like c2 and c3) did not bind: it has widgets of its own CRD.
    await installCrd(admin(), widgetCrd(), '/clusters/loner');
  });

  after(async () => {
    resumable = false;
    await informer?.stop();
    await s?.close();
    await db?.drop();
    await b?.close();
  });

  it('the provider\'s informer sees exactly the three consumers\' widgets on two shards, and writes their status', async () => {
    const kc = testKubeConfig(`${s.url}${VIEW}/clusters/*`, controller);
    const objects = kc.makeApiClient(CustomObjectsApi);
    const list = async () => (await objects.listClusterCustomObject({ group: 'example.com', version: 'v1', plural: 'widgets' })) as KubernetesListObject<Widget>;
    informer = makeInformer<Widget>(kc, '/apis/example.com/v1/widgets', list);
    informer.on('add', (o) => log.push(`add ${who(o)}`));
    informer.on('update', (o) => log.push(`update ${who(o)} ${o.spec?.size} ${o.status?.phase ?? ''}`));
    informer.on('delete', (o) => log.push(`delete ${who(o)}`));
    // client-node's informer stops at an error (a refused connection, a 503): watch again from where it was.
    informer.on('error', () => {
      if (resumable) setTimeout(() => resumable && void informer.start().catch(() => undefined), 300);
    });
    await informer.start();
    for (const [i, t] of CONSUMERS.entries()) {
      const r = await k(t, ['apply', '-f', '-'], widgetYaml(`w-${t}`, i + 1, t === 'c2' ? {} : { tier: 'gold' }));
      assert.equal(r.code, 0, r.stderr);
    }
    await admin().post('/clusters/loner/apis/example.com/v1/namespaces/default/widgets').send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'lonely' }, spec: { size: 1 } }).expect(201);
    await eventually(async () => informer.list().length === 3, { timeoutMs: 20_000, message: 'three widgets in the informer' });
    assert.deepEqual(informer.list().map(who).sort(), ['c1/w-c1', 'c2/w-c2', 'c3/w-c3']);
    // Every resourceVersion the provider sees is a cursor of the view, not one shard's revision.
    for (const o of informer.list()) assert.doesNotMatch(String(o.metadata?.resourceVersion), /^[0-9]+$/);

    // Status through the view: c1's with the informer's object as it is (its cursor stands for the object's own revision).
    const w1 = informer.list().find((o) => o.metadata?.name === 'w-c1')!;
    const put = `${VIEW}/clusters/c1/apis/example.com/v1/namespaces/default/widgets/w-c1/status`;
    const updated = await asController().put(put).send({ ...w1, status: { phase: 'Ready' } }).expect(200);
    assert.equal(updated.body.status.phase, 'Ready');
    // The same cursor again is stale now: 409, as for any stale resourceVersion.
    await asController().put(put).send({ ...w1, status: { phase: 'Stale' } }).expect(409);
    for (const t of ['c2', 'c3']) {
      await asController().patch(`${VIEW}/clusters/${t}/apis/example.com/v1/namespaces/default/widgets/w-${t}/status`).set('Content-Type', 'application/merge-patch+json').send({ status: { phase: 'Ready' } }).expect(200);
    }
    await eventually(async () => CONSUMERS.every((t) => log.includes(`update ${t}/w-${t} ${CONSUMERS.indexOf(t) + 1} Ready`)), { timeoutMs: 20_000, message: 'status updates seen' });
    const inC2 = await asCarol().get('/clusters/c2/apis/example.com/v1/namespaces/default/widgets/w-c2').expect(200);
    assert.equal(inC2.body.status.phase, 'Ready');
    assert.ok(!log.some((l) => l.includes('lonely')));
  });

  it('a tenant that did not bind sees nothing of the export, and the provider nothing of it', async () => {
    await asController().get(`${VIEW}/clusters/loner/apis/example.com/v1/widgets`).expect(404);
    const own = await admin().get('/clusters/loner/apis/example.com/v1/widgets').expect(200);
    assert.deepEqual(own.body.items.map((o: Widget) => o.metadata?.name), ['lonely']);
    const all = await asController().get(ALL).expect(200);
    assert.deepEqual(all.body.items.map(who), ['c1/w-c1', 'c2/w-c2', 'c3/w-c3']);
  });

  it('pages (limit/continue) and selects (labels, fields) across shards, at one snapshot', async () => {
    const pages: string[][] = [];
    let cont = '';
    let rv: string | undefined;
    do {
      const page = await asController().get(`${ALL}?limit=1${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`).expect(200);
      pages.push(page.body.items.map(who));
      rv ??= page.body.metadata.resourceVersion;
      assert.equal(page.body.metadata.resourceVersion, rv, 'every page shows the first page\'s snapshot');
      cont = page.body.metadata.continue ?? '';
      // A write between pages is not in the snapshot.
      if (pages.length === 1) await asCarol().post('/clusters/c3/apis/example.com/v1/namespaces/default/widgets').send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'x-c3' }, spec: { size: 1 } }).expect(201);
    } while (cont);
    assert.deepEqual(pages, [['c1/w-c1'], ['c2/w-c2'], ['c3/w-c3']]);
    const gold = await asController().get(`${ALL}?labelSelector=tier%3Dgold`).expect(200);
    assert.deepEqual(gold.body.items.map(who), ['c1/w-c1', 'c3/w-c3']);
    const named = await asController().get(`${ALL}?fieldSelector=metadata.name%3Dx-c3`).expect(200);
    assert.deepEqual(named.body.items.map(who), ['c3/x-c3']);
    // A watch with a label selector from the list's resourceVersion: only what matches, across both shards.
    const listed = await asController().get(ALL).expect(200);
    await asCarol().post('/clusters/c2/apis/example.com/v1/namespaces/default/widgets').send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'g-c2', labels: { tier: 'gold' } }, spec: { size: 1 } }).expect(201);
    await asCarol().post('/clusters/c1/apis/example.com/v1/namespaces/default/widgets').send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'p-c1' }, spec: { size: 1 } }).expect(201);
    const watched = await watchLines(asController().get(`${ALL}?watch=true&labelSelector=tier%3Dgold&timeoutSeconds=2&resourceVersion=${encodeURIComponent(listed.body.metadata.resourceVersion)}`));
    assert.deepEqual(watched.events.map((e) => `${e.type} ${who(e.object)}`), ['ADDED c2/g-c2']);
    // Bad input: a continue token or resourceVersion not made by the view is 400; one shard's plain revision is 410.
    assert.equal((await asController().get(`${ALL}?limit=1&continue=garbage`).expect(400)).body.reason, 'BadRequest');
    assert.equal((await asController().get(`${ALL}?watch=true&resourceVersion=garbage!`).expect(400)).body.reason, 'BadRequest');
    assert.equal((await asController().get(`${ALL}?watch=true&resourceVersion=12`).expect(410)).body.reason, 'Expired');
  });

  it('resumes after a server restart from the informer\'s last resourceVersion: writes made while it was down arrive once', async () => {
    await eventually(async () => informer.list().length === 6, { timeoutMs: 20_000, message: 'the informer has x-c3, g-c2 and p-c1 too' });
    const rvBefore = latestResourceVersion();
    assert.doesNotMatch(rvBefore, /^[0-9]*$/);
    resumable = false;
    await s.close();
    const mark = log.length;
    // The same databases and port; the new server's watch caches start empty, so the resume reads the change logs.
    s = await startTestServerOn(db, env);
    await waitShardReady(s.url, 'b');
    for (const [t, name] of [['c1', 'r-c1'], ['c2', 'r-c2']]) assert.equal((await k(t, ['apply', '-f', '-'], widgetYaml(name, 2))).code, 0);
    assert.equal((await k('c3', ['patch', 'widget', 'w-c3', '-n', 'default', '--type=merge', '-p', '{"spec":{"size":4}}'])).code, 0);
    assert.equal((await k('c1', ['delete', 'widget', 'p-c1', '-n', 'default'])).code, 0);
    assert.equal(log.length, mark, 'nothing arrives while the informer is not watching');
    assert.equal(latestResourceVersion(), rvBefore);
    resumable = true;
    void informer.start();
    // A sentinel written after the resume: once it has arrived, everything before it has.
    await eventually(async () => log.includes('add c2/r-c2') && log.includes('add c1/r-c1'), { timeoutMs: 30_000, message: 'the writes made while down' });
    await asCarol().post('/clusters/c3/apis/example.com/v1/namespaces/default/widgets').send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'sentinel-c3' }, spec: { size: 1 } }).expect(201);
    await eventually(async () => log.includes('add c3/sentinel-c3'), { timeoutMs: 20_000, message: 'the sentinel' });
    assert.deepEqual(log.slice(mark).sort(), ['add c1/r-c1', 'add c2/r-c2', 'add c3/sentinel-c3', 'delete c1/p-c1', 'update c3/w-c3 4 Ready'].sort());
    // Each shard's events in that shard's order.
    const order = log.slice(mark);
    assert.ok(order.indexOf('add c1/r-c1') < order.indexOf('delete c1/p-c1'));
    assert.ok(order.indexOf('add c2/r-c2') < order.indexOf('update c3/w-c3 4 Ready'));
  });

  it('a deleted binding leaves the view: watches from before it get 410, the informer lists again without the tenant', async () => {
    const before = (await asController().get(ALL).expect(200)).body.metadata.resourceVersion;
    const mark = log.length;
    // 202: its cleanup finalizer keeps it (deletionTimestamp set) until its widgets are deleted.
    await asCarol().delete(`/clusters/c3${APIS}/apibindings/widgets`).expect(202);
    // Its cleanup finalizer holds the binding until its widgets are deleted (the provider sees them go), then it goes.
    await eventually(async () => (await asCarol().get(`/clusters/c3${APIS}/apibindings/widgets`)).status === 404, { timeoutMs: 30_000, message: 'the binding of c3 gone' });
    const all = await eventually(async () => {
      const res = await asController().get(ALL).expect(200);
      return res.body.items.every((o: Widget) => o.metadata?.annotations?.[TENANT] !== 'c3') ? res.body : false;
    }, { timeoutMs: 20_000, message: 'c3 gone from the list' });
    assert.deepEqual(all.items.map(who), ['c1/r-c1', 'c1/w-c1', 'c2/g-c2', 'c2/r-c2', 'c2/w-c2']);
    const stale = await asController().get(`${ALL}?watch=true&resourceVersion=${encodeURIComponent(before)}`).expect(410);
    assert.equal(stale.body.reason, 'Expired');
    await eventually(async () => informer.list().every((o) => o.metadata?.annotations?.[TENANT] !== 'c3'), { timeoutMs: 30_000, message: 'the informer relisted without c3' });
    assert.deepEqual(log.slice(mark).filter((l) => l.startsWith('delete')).sort(), ['delete c3/sentinel-c3', 'delete c3/w-c3', 'delete c3/x-c3']);
    await asController().get(`${VIEW}/clusters/c3/apis/example.com/v1/widgets`).expect(404);
    // What the binding made is deleted: c3's widgets are gone from shard b's database, loner's (not bound) stay.
    const rows = async (tenant: string) => Number((await query<{ n: string | number }>(b.url, 'SELECT count(*) AS n FROM objects WHERE tenant = $1 AND resource = $2', [tenant, 'widgets.example.com']))[0].n);
    await eventually(async () => (await rows('c3')) === 0, { timeoutMs: 20_000, message: 'c3\'s widgets deleted' });
    assert.equal(await rows('loner'), 1);
  });

  it('a shard that is down: the view answers 503 with Retry-After at once, and an open watch ends', async () => {
    resumable = false;
    await informer.stop();
    const listed = await asController().get(ALL).expect(200);
    // A watch the server has answered (200) before the shard goes: it must end cleanly (done without an error), not hang.
    let ended: (err: unknown) => void = () => undefined;
    const open = new Promise<unknown>((resolve) => (ended = resolve));
    const kc = testKubeConfig(`${s.url}${VIEW}/clusters/*`, controller);
    await new Watch(kc).watch('/apis/example.com/v1/widgets', { resourceVersion: listed.body.metadata.resourceVersion }, () => undefined, (err) => ended(err));
    await b.kill();
    // The first answers may come from the failed statements, the next ones (once the shard's probe has noticed) name the shard.
    const down = await eventually(async () => {
      const res = await asController().get(ALL);
      return res.status === 503 && /shard "b"/.test(res.body.message) ? res : false;
    }, { timeoutMs: 30_000, message: 'the view answers 503 naming shard b' });
    assert.equal(down.headers['retry-after'], '1');
    assert.equal(down.body.reason, 'ServiceUnavailable');
    assert.equal(await open, null, 'the watch ended cleanly');
    await b.restart();
    await waitShardReady(s.url, 'b');
    const back = await eventually(async () => {
      const res = await asController().get(ALL);
      return res.status === 200 ? res : false;
    }, { timeoutMs: 30_000, message: 'the view answers again' });
    assert.equal(back.body.items.length, 5);
  });
});
