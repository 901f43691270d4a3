import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import request from 'supertest';
import { installCrd, widgetCrd } from '../crd/crd-fixtures.js';
import { startTestServerOn, type TestServer } from '../support/test-server.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { eventually } from '../support/eventually.js';
import { query } from '../shards/support/shards.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const APIS = '/apis/apis.plinth.dev/v1alpha1';
const FINALIZER = 'apibindingcleanup.apis.plinth.dev';

/** The advisory lock the cleanup controller's leader holds (AdvisoryLockElector's key of `apibinding-cleanup`). */
const CLEANUP_LOCK = createHash('sha256').update('plinth controller apibinding-cleanup').digest().readBigInt64BE(0).toString();

const binding = { apiVersion: 'apis.plinth.dev/v1alpha1', kind: 'APIBinding', metadata: { name: 'widgets' }, spec: { reference: { export: { path: 'provider', name: 'widgets' } } } };

/**
 * The cleanup of a deleted APIBinding is held by its finalizer
 * (docs/api-sharing.md): deleting one sets its deletionTimestamp, the
 * binding-cleanup controller deletes the tenant's bound objects and then
 * the finalizer. A binding deleted while no replica runs the controller
 * (here: the test holds the controller's election lock, so the server in
 * cluster mode never leads it) is finished by the next server that does.
 */
describe('APIBinding deletion: the cleanup finalizer', { timeout: 170_000 }, () => {
  let database: TestDatabase;
  let s: TestServer | undefined;
  const env = () => ({ REDIS_URL: process.env.PLINTH_TEST_REDIS_URL ?? '' });
  const admin = () => request(s!.url);
  const widgets = async (tenant: string) => Number((await query<{ n: string | number }>(database.url, 'SELECT count(*) AS n FROM objects WHERE tenant = $1 AND resource = $2', [tenant, 'widgets.example.com']))[0].n);
  const createWidgets = async (tenant: string, n: number) => {
    for (let i = 0; i < n; i++) {
      await admin().post(`/clusters/${tenant}/apis/example.com/v1/namespaces/default/widgets`).send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: `w${i}` }, spec: { size: i + 1 } }).expect(201);
    }
  };

  before(async () => {
    assert.ok(process.env.PLINTH_TEST_REDIS_URL, 'PLINTH_TEST_REDIS_URL is not set: run with test/run-tests.mjs (redis-server must be installed)');
    database = await createTestDatabase('binding_cleanup');
    s = await startTestServerOn(database, env());
    for (const t of ['provider', 'c1', 'c2', 'c3']) await admin().post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: t } }).expect(201);
    await installCrd(admin(), widgetCrd({ subresources: { status: {} } }), '/clusters/provider');
    await admin().post(`/clusters/provider${APIS}/apiexports`).send({ apiVersion: 'apis.plinth.dev/v1alpha1', kind: 'APIExport', metadata: { name: 'widgets' }, spec: { resources: [{ group: 'example.com', resource: 'widgets' }] } }).expect(201);
    for (const t of ['c1', 'c2', 'c3']) {
      const made = await admin().post(`/clusters/${t}${APIS}/apibindings`).send(binding).expect(201);
      assert.deepEqual(made.body.metadata.finalizers, [FINALIZER], 'a binding gets the cleanup finalizer when created');
      await eventually(async () => (await admin().get(`/clusters/${t}/apis/example.com/v1/namespaces/default/widgets`)).status === 200, { timeoutMs: 20_000, message: `widgets served in ${t}` });
      await createWidgets(t, 3);
    }
  });
  after(async () => {
    await s?.close();
    await database?.drop();
  });

  it('keeps the finalizer through updates of the binding', async () => {
    const b = (await admin().get(`/clusters/c3${APIS}/apibindings/widgets`).expect(200)).body;
    const put = await admin().put(`/clusters/c3${APIS}/apibindings/widgets`).send({ ...b, metadata: { ...b.metadata, finalizers: [], labels: { touched: 'yes' } } }).expect(200);
    assert.deepEqual(put.body.metadata.finalizers, [FINALIZER]);
  });

  it('a deleted binding waits for its finalizer; the controller deletes the bound objects, then the binding goes', async () => {
    const del = await admin().delete(`/clusters/c1${APIS}/apibindings/widgets`).expect(202);
    assert.ok(del.body.metadata?.deletionTimestamp, 'the binding is marked for deletion, not removed at once');
    await eventually(async () => (await admin().get(`/clusters/c1${APIS}/apibindings/widgets`)).status === 404, { timeoutMs: 30_000, message: 'the binding is gone' });
    assert.equal(await widgets('c1'), 0, 'its widgets were deleted before the binding went');
    assert.equal(await widgets('c2'), 3, 'other bindings keep theirs');
    // The tenant serves widgets no more; binding again serves it afresh.
    await eventually(async () => (await admin().get(`/clusters/c1/apis/example.com/v1/namespaces/default/widgets`)).status === 404, { timeoutMs: 20_000, message: 'widgets no longer served in c1' });
  });

  it('a binding deleted while no replica runs the controller is cleaned up by the next server that does', async () => {
    await s!.close();
    s = undefined;
    // Nobody may lead the cleanup controller: the test holds its election lock.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      const { rows } = await holder.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS locked', [CLEANUP_LOCK]);
      assert.equal(rows[0].locked, true);
      s = await startTestServerOn(database, env());
      const del = await admin().delete(`/clusters/c2${APIS}/apibindings/widgets`).expect(202);
      assert.ok(del.body.metadata?.deletionTimestamp);
      // The deletion is recorded (deletionTimestamp, finalizer kept) and nothing cleans it up here.
      const held = (await admin().get(`/clusters/c2${APIS}/apibindings/widgets`).expect(200)).body;
      assert.ok(held.metadata.deletionTimestamp);
      assert.deepEqual(held.metadata.finalizers, [FINALIZER]);
      assert.equal(await widgets('c2'), 3);
      // The server stops after the deletionTimestamp was written (as a crash would).
      await s.close();
      s = undefined;
    } finally {
      await holder.query('SELECT pg_advisory_unlock_all()').catch(() => undefined);
      await holder.end();
    }
    s = await startTestServerOn(database, env());
    await eventually(async () => (await admin().get(`/clusters/c2${APIS}/apibindings/widgets`)).status === 404, { timeoutMs: 60_000, message: 'the binding deleted while nobody cleaned up is gone' });
    assert.equal(await widgets('c2'), 0);
    assert.equal(await widgets('c3'), 3, 'the binding not deleted keeps its widgets');
    await admin().get(`/clusters/c3${APIS}/apibindings/widgets`).expect(200);
  });
});
