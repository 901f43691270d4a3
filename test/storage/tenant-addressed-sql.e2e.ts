import assert from 'node:assert/strict';
import type { EventEmitter } from 'node:events';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import request from 'supertest';
import { eventually } from '../support/eventually.js';
import { certificateIdentity, type ClientIdentity, requestAs, type RequestAs } from '../support/credentials.js';
import { type RecordedStatement, SqlRecorder } from '../support/sql-recorder.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { WatchClient } from '../watch/support/watch-client.js';
import { tenantsAddressedBy } from './support/tenant-addressed-sql.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } }],
  },
};

/** What a tenant's user does through the API: every verb on built-in kinds, lists and watches, then CRDs and RBAC. */
async function actAsTenantUser(url: string, tenant: string, id: ClientIdentity): Promise<void> {
  const api: RequestAs = requestAs(url, id);
  const T = `/clusters/${tenant}`;
  const NS = `${T}/api/v1/namespaces`;
  const CM = `${NS}/work/configmaps`;
  await api.post(NS).send({ metadata: { name: 'work', labels: { team: tenant } } }).expect(201);
  await api.get(`${NS}/work`).expect(200);
  await api.get(NS).expect(200);
  await api.post(`${NS}/work/resourcequotas`).send({ metadata: { name: 'q' }, spec: { hard: { 'count/configmaps': '50' } } }).expect(201);

  // Concurrent writes: the server may send them together (group commit).
  const made = await Promise.all(Array.from({ length: 12 }, (_, i) => api.post(CM).send({ metadata: { name: `cm-${i}`, labels: { app: i % 2 ? 'odd' : 'even' } }, data: { i: String(i) } }).expect(201)));
  const past = made.map((r) => Number(r.body.metadata.resourceVersion)).sort((a, b) => a - b).at(-1)!;
  const cm0 = (await api.get(`${CM}/cm-0`).expect(200)).body;
  await api.put(`${CM}/cm-0`).send({ ...cm0, data: { i: 'zero' } }).expect(200);
  await api.patch(`${CM}/cm-1`).set('Content-Type', 'application/merge-patch+json').send({ data: { i: 'one' } }).expect(200);
  await api.patch(`${CM}/cm-2`).set('Content-Type', 'application/json-patch+json').send([{ op: 'add', path: '/data/j', value: 'x' }]).expect(200);
  await api
    .patch(`${CM}/applied?fieldManager=tester`)
    .set('Content-Type', 'application/apply-patch+yaml')
    .send(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, data: { a: '1' } }))
    .expect(201);
  await api.get(`${CM}?labelSelector=app%3Dodd`).expect(200);
  await api.get(`${T}/api/v1/configmaps?limit=5`).expect(200);
  // A paged list at a past revision: its first page, then the rest through the continue token.
  const page = (await api.get(`${CM}?limit=4&resourceVersion=${past}&resourceVersionMatch=Exact`).expect(200)).body;
  assert.ok(page.metadata.continue, 'the past list has more than one page');
  await api.get(`${CM}?limit=4&continue=${encodeURIComponent(page.metadata.continue)}`).expect(200);
  await api.delete(`${CM}/cm-3`).expect(200);
  await api.delete(`${CM}?labelSelector=app%3Deven`).expect(200);

  // A watch, then a resume from the last revision it saw.
  const w = await WatchClient.watch(url, `${CM}?resourceVersion=${past}`, {}, id);
  assert.equal(w.status, 200);
  const first = await w.next(10_000);
  w.close();
  await api.patch(`${CM}/cm-5`).set('Content-Type', 'application/merge-patch+json').send({ data: { i: 'five' } }).expect(200);
  const resumed = await WatchClient.watch(url, `${CM}?resourceVersion=${first.object.metadata.resourceVersion}&allowWatchBookmarks=true`, {}, id);
  await resumed.next(10_000);
  resumed.close();

  await actOnCrdsAndRbac(api, T);
  // Namespace deletion is finished by the namespace controller, in the background.
  await api.delete(`${NS}/work`).expect((r) => assert.ok(r.status === 200 || r.status === 202, `deleting the namespace: ${r.status}`));
}

/** A tenant user's CRD and custom resources, then RBAC objects, in namespace `work` of tenant path `T`. */
async function actOnCrdsAndRbac(api: RequestAs, T: string): Promise<void> {
  await api.post(`${T}${CRD_PATH}`).send(CRD).expect(201);
  const G = `${T}/apis/example.com/v1/namespaces/work/gadgets`;
  await eventually(async () => (await api.get(G)).status === 200, { timeoutMs: 20_000, message: 'gadgets served' });
  await api.post(G).send({ apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g1' }, spec: { size: 1 } }).expect(201);
  await api.get(`${G}/g1`).expect(200);
  await api.patch(`${G}/g1`).set('Content-Type', 'application/merge-patch+json').send({ spec: { size: 2 } }).expect(200);
  await api.get(`${T}/apis/example.com/v1/gadgets`).expect(200);
  await api.delete(`${G}/g1`).expect(200);

  // RBAC objects.
  const rbac = `${T}/apis/rbac.authorization.k8s.io/v1`;
  await api.post(`${rbac}/namespaces/work/roles`).send({ metadata: { name: 'reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] }).expect(201);
  await api.post(`${rbac}/namespaces/work/rolebindings`).send({ metadata: { name: 'readers' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' }, subjects: [{ kind: 'User', name: 'carol' }] }).expect(201);
  await api.get(`${rbac}/namespaces/work/rolebindings`).expect(200);
  await api.post(`${rbac}/clusterroles`).send({ metadata: { name: 'viewer' }, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get'] }] }).expect(201);
  await api.delete(`${rbac}/clusterroles/viewer`).expect(200);
  await api.delete(`${rbac}/namespaces/work/rolebindings/readers`).expect(200);
}

/** The HTTPS server the API listens on (requests to it are the request path). */
function apiListenerOf(s: TestServer): EventEmitter {
  return s.app.getHttpServer() as unknown as EventEmitter;
}

describe('every statement on the request path addresses one tenant', { timeout: 180_000 }, () => {
  let s: TestServer;
  const recorder = new SqlRecorder();
  let statements: RecordedStatement[] = [];

  before(async () => {
    s = await startTestServer('tenant_sql');
    for (const [name, owner] of [['acme', 'alice'], ['globex', 'bob']]) {
      await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec: { owners: [{ kind: 'User', name: owner }] } }).expect(201);
    }
    for (const name of ['acme', 'globex']) await eventually(async () => (await request(s.url).get(`/clusters/${name}/api/v1/namespaces/default`)).status === 200, { timeoutMs: 20_000, message: `tenant ${name} served` });
    recorder.install(apiListenerOf(s));
    recorder.start();
    const [alice, bob] = await Promise.all([certificateIdentity('alice'), certificateIdentity('bob')]);
    const users = [requestAs(s.url, alice), requestAs(s.url, bob)];
    // Bursts of both tenants' writes at once: while one write commits, the next ones wait together (group commit).
    for (let round = 0; round < 3; round++) {
      await Promise.all(Array.from({ length: 24 }, (_, i) => users[i % 2].post(`/clusters/${i % 2 ? 'globex' : 'acme'}/api/v1/namespaces/default/configmaps`).send({ metadata: { name: `burst-${round}-${i}` } }).expect(201)));
    }
    // Both tenants at once: statements of one must never carry the other's rows.
    await Promise.all([actAsTenantUser(s.url, 'acme', alice), actAsTenantUser(s.url, 'globex', bob)]);
    statements = recorder.stop();
  });
  after(async () => {
    recorder.uninstall();
    await s?.close();
  });

  it('collects the statements of the requests (reads, writes and watch catch-up of both tenants)', () => {
    for (const tenant of ['acme', 'globex']) {
      const mine = statements.filter((st) => tenantsAddressedBy(st).tenants?.includes(tenant));
      assert.ok(mine.some((st) => /plinth_(write_batch|create|update|delete)/.test(st.text)), `writes of ${tenant} were recorded`);
      assert.ok(mine.some((st) => /\bfrom\s+"?objects"?/i.test(st.text)), `object reads of ${tenant} were recorded`);
      assert.ok(mine.some((st) => /\bchanges\b/i.test(st.text)), `change-log reads of ${tenant} were recorded`);
    }
  });

  it('finds no statement that reads or writes the rows of several tenants, or of none', () => {
    const offending = statements.map((st) => ({ st, verdict: tenantsAddressedBy(st) })).filter(({ verdict }) => !verdict.ok);
    const shown = offending.map(({ st, verdict }) => `${verdict.why}\n  ${st.request}\n  ${st.text.replace(/\s+/g, ' ').slice(0, 400)}\n  values: ${JSON.stringify(st.values).slice(0, 300)}`);
    assert.deepEqual(shown, [], `statements not addressed to one tenant:\n${shown.join('\n')}`);
  });

  it('keys every table that holds tenant rows by the tenant first, and every unique index includes it', async () => {
    const c = new pg.Client({ connectionString: s.database.url });
    await c.connect();
    try {
      const { rows } = await c.query<{ table: string; unique_index: string; primary: boolean; columns: string[] }>(`
        SELECT t.relname AS table, i.relname AS unique_index, x.indisprimary AS primary,
          array(SELECT coalesce(a.attname, '<expr>') FROM unnest(x.indkey) WITH ORDINALITY k(attnum, n)
                LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS columns
        FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
        JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE n.nspname = 'public' AND x.indisunique AND t.relname NOT LIKE 'kysely_%'
        ORDER BY 1, 2`);
      const tenantColumn = (table: string) => (table === 'tenants' ? 'name' : 'tenant');
      // Shard-level watermarks (one row per database; on Citus they would become per tenant, see docs/sharding.md),
      // the encryption rotation job's cursor over the whole shard (migration 0017), and change_label_index: the first
      // revision written with the change log's label index (migration 0018), the timelines whose counter was fenced after a
      // failover (revision_epochs, migration 0022) and the times of revisions that date Events (revision_marks, migration 0024).
      const watermarks = new Set(['revision_counter', 'compaction_state', 'encryption_rotation', 'change_label_index', 'revision_epochs', 'revision_marks']);
      const bad = rows.filter((r) => !watermarks.has(r.table) && (r.primary ? r.columns[0] !== tenantColumn(r.table) : !r.columns.includes(tenantColumn(r.table))));
      assert.deepEqual(bad, []);
      const keyed = rows.filter((r) => r.primary).map((r) => r.table);
      assert.deepEqual(keyed.filter((t) => !watermarks.has(t)).sort(), ['changes', 'objects', 'quota_usage', 'tenant_usage', 'tenants']);
      const { rows: tables } = await c.query<{ table: string }>(`SELECT relname AS table FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND relname NOT LIKE 'kysely_%' ORDER BY 1`);
      assert.deepEqual(tables.map((t) => t.table).filter((t) => !keyed.includes(t)), [], 'every table has a primary key');
    } finally {
      await c.end();
    }
  });
});
