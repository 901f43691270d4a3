import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { WatchClient } from '../watch/support/watch-client.js';
import { eventually } from '../support/eventually.js';

const CORE = '/api/v1/namespaces/ev/events';
const NEW = '/apis/events.k8s.io/v1/namespaces/ev/events';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

/** A valid events.k8s.io/v1 Event. */
function newEvent(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name },
    eventTime: '2026-11-25T05:00:00.000000Z',
    reportingController: 'example.com/e2e',
    reportingInstance: 'e2e-1',
    action: 'Checked',
    reason: 'Looked',
    type: 'Normal',
    regarding: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ev', name: 'cm' },
    note: 'looked at it',
    ...extra,
  };
}

function causes(body: { details?: { causes?: Array<{ field: string; message: string }> } }): string[] {
  return (body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
}

describe('events.k8s.io/v1 and core/v1 Events over one storage', { timeout: 120_000 }, () => {
  let s: TestServer;
  let kc: string;
  const api = () => request(s.url);

  before(async () => {
    s = await startTestServer('events');
    kc = writeTestKubeconfig(s.url);
    for (const ns of ['ev', 'gc-a', 'gc-b']) await api().post('/api/v1/namespaces').send({ metadata: { name: ns } }).expect(201);
  });
  after(async () => s?.close());

  it('lists events.k8s.io/v1 in discovery and OpenAPI', async () => {
    const groups = await api().get('/apis').expect(200);
    const group = groups.body.groups.find((g: { name: string }) => g.name === 'events.k8s.io');
    assert.deepEqual(group?.preferredVersion, { groupVersion: 'events.k8s.io/v1', version: 'v1' });
    const res = await api().get('/apis/events.k8s.io/v1').expect(200);
    const events = res.body.resources.find((r: { name: string }) => r.name === 'events');
    assert.deepEqual([events.kind, events.namespaced, events.singularName, events.shortNames], ['Event', true, 'event', ['ev']]);
    assert.deepEqual([...events.verbs].sort(), ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    const doc = await api().get('/openapi/v3/apis/events.k8s.io/v1').expect(200);
    const schema = doc.body.components.schemas['io.k8s.api.events.v1.Event'];
    assert.ok(schema, Object.keys(doc.body.components.schemas).join(','));
    assert.deepEqual(schema.required, ['eventTime']);
    for (const f of ['regarding', 'note', 'reportingController', 'deprecatedCount', 'series']) assert.ok(schema.properties[f], f);
  });

  it('serves an Event written through one API in the other, fields renamed as upstream', async () => {
    await api().post(NEW).send(newEvent('via-new')).expect(201);
    const asCore = (await api().get(`${CORE}/via-new`).expect(200)).body;
    assert.equal(asCore.apiVersion, 'v1');
    assert.equal(asCore.message, 'looked at it');
    assert.equal(asCore.reportingComponent, 'example.com/e2e');
    assert.deepEqual(asCore.involvedObject, { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ev', name: 'cm' });
    assert.equal(asCore.note, undefined);

    await api()
      .post(CORE)
      .send({ metadata: { name: 'via-core' }, involvedObject: { kind: 'ConfigMap', namespace: 'ev', name: 'cm' }, reason: 'Old', message: 'old style', count: 4, source: { component: 'c' }, type: 'Normal' })
      .expect(201);
    const asNew = (await api().get(`${NEW}/via-core`).expect(200)).body;
    assert.equal(asNew.apiVersion, 'events.k8s.io/v1');
    assert.equal(asNew.note, 'old style');
    assert.equal(asNew.deprecatedCount, 4);
    assert.deepEqual(asNew.deprecatedSource, { component: 'c' });
    assert.equal(asNew.eventTime, null);
    assert.equal(asNew.message, undefined);
    const list = (await api().get(`${NEW}?fieldSelector=reason%3DOld`).expect(200)).body;
    assert.equal(list.kind, 'EventList');
    assert.deepEqual(list.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['via-core']);
  });

  it('watches through events.k8s.io/v1 what is written through core/v1', async () => {
    const rv = (await api().get(NEW).expect(200)).body.metadata.resourceVersion;
    const w = await WatchClient.watch(s.url, `${NEW}?resourceVersion=${rv}`);
    try {
      await api().post(CORE).send({ metadata: { name: 'watched' }, involvedObject: { kind: 'ConfigMap', namespace: 'ev', name: 'cm' }, reason: 'W', message: 'seen' }).expect(201);
      const ev = await w.next(10_000);
      assert.equal(ev.type, 'ADDED');
      assert.equal(ev.object.apiVersion, 'events.k8s.io/v1');
      assert.equal(ev.object.note, 'seen');
      assert.equal(ev.object.regarding.name, 'cm');
    } finally {
      w.close();
    }
  });

  it('applies upstream strict validation to events.k8s.io/v1 writes and legacy validation to core/v1 ones', async () => {
    const strict = await api()
      .post(NEW)
      .send(newEvent('bad', { eventTime: undefined, type: 'Odd', deprecatedCount: 2, deprecatedSource: { component: 'x' }, series: { count: 1 } }))
      .expect(422);
    assert.deepEqual(causes(strict.body).sort(), [
      'count: Invalid value: "": needs to be unset',
      'eventTime: Required value',
      'series.count: Invalid value: "": should be at least 2',
      'series.lastObservedTime: Required value',
      'source: Invalid value: "": needs to be unset',
      'type: Invalid value: "": has invalid value: Odd',
    ]);
    const missing = await api().post(NEW).send(newEvent('bad2', { reportingController: undefined, action: undefined })).expect(422);
    // As upstream, an empty reportingController is also reported as not a qualified name.
    const missingCauses = causes(missing.body).sort();
    assert.deepEqual(missingCauses.slice(0, 2), ['action: Required value', 'reportingController: Invalid value: "": name part must be non-empty']);
    assert.equal(missingCauses[3], 'reportingController: Required value');
    const core = await api().post(CORE).send({ metadata: { name: 'bad3' }, involvedObject: { kind: 'ConfigMap', namespace: 'other', name: 'cm' }, reason: 'X' }).expect(422);
    assert.deepEqual(causes(core.body), ['involvedObject.namespace: Invalid value: "other": does not match event.namespace']);
  });

  it('refuses changes to an event’s description through events.k8s.io/v1 (immutable fields)', async () => {
    await api().post(NEW).send(newEvent('fixed')).expect(201);
    const res = await api().patch(`${NEW}/fixed`).set('Content-Type', 'application/merge-patch+json').send(JSON.stringify({ note: 'rewritten' })).expect(422);
    assert.deepEqual(causes(res.body), ['message: Invalid value: "rewritten": field is immutable']);
    const series = await api()
      .patch(`${NEW}/fixed`)
      .set('Content-Type', 'application/merge-patch+json')
      .send(JSON.stringify({ series: { count: 2, lastObservedTime: '2026-11-25T05:01:00.000000Z' } }))
      .expect(200);
    assert.equal(series.body.series.count, 2);
  });

  it('prints upstream’s Event columns for both APIs, and kubectl shows them', async () => {
    for (const path of [NEW, CORE]) {
      const t = (await api().get(path).set('Accept', TABLE).expect(200)).body;
      assert.deepEqual(t.columnDefinitions.map((c: { name: string }) => c.name), ['Last Seen', 'Type', 'Reason', 'Object', 'Subobject', 'Source', 'Message', 'First Seen', 'Count', 'Name']);
      const row = t.rows.find((r: { cells: unknown[] }) => r.cells[9] === 'via-new');
      assert.deepEqual(row.cells.slice(1, 7), ['Normal', 'Looked', 'configmap/cm', '', 'example.com/e2e, e2e-1', 'looked at it']);
      assert.equal(row.cells[8], 1);
    }
    const out = await kubectl(kc, ['get', 'events.events.k8s.io', '-n', 'ev', '--field-selector', 'reason=Looked']);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/m);
    assert.match(out.stdout, /Normal\s+Looked\s+configmap\/cm\s+looked at it/);
  });

  it('treats an owner in another namespace as absent: the dependent is collected and an OwnerRefInvalidNamespace event recorded on it', async () => {
    const owner = (await api().post('/api/v1/namespaces/gc-a/configmaps').send({ metadata: { name: 'owner' } }).expect(201)).body;
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid };
    const dep = (await api().post('/api/v1/namespaces/gc-b/configmaps').send({ metadata: { name: 'dep', ownerReferences: [ref] } }).expect(201)).body;
    await eventually(async () => (await api().get('/api/v1/namespaces/gc-b/configmaps/dep')).status === 404, { timeoutMs: 15_000, message: 'dependent collected' });
    const events = (await api().get('/api/v1/namespaces/gc-b/events?fieldSelector=reason%3DOwnerRefInvalidNamespace').expect(200)).body.items;
    assert.equal(events.length, 1);
    assert.equal(events[0].type, 'Warning');
    assert.deepEqual(events[0].involvedObject, { kind: 'ConfigMap', apiVersion: 'v1', namespace: 'gc-b', name: 'dep', uid: dep.metadata.uid });
    assert.equal(events[0].message, `ownerRef [v1/ConfigMap, namespace: gc-b, name: owner, uid: ${owner.metadata.uid}] does not exist in namespace "gc-b"`);
    assert.equal(events[0].source.component, 'garbage-collector-controller');
    await api().get('/api/v1/namespaces/gc-a/configmaps/owner').expect(200);
    const out = await kubectl(kc, ['get', 'events', '-A', '--field-selector=reason=OwnerRefInvalidNamespace', '-o', 'name']);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout.trim().split('\n').length, 1);
  });

  it('keeps a dependent with a valid owner too, removing only the invalid reference', async () => {
    const far = (await api().post('/api/v1/namespaces/gc-a/configmaps').send({ metadata: { name: 'far' } }).expect(201)).body;
    const near = (await api().post('/api/v1/namespaces/gc-b/configmaps').send({ metadata: { name: 'near' } }).expect(201)).body;
    const refs = [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'far', uid: far.metadata.uid },
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'near', uid: near.metadata.uid },
    ];
    await api().post('/api/v1/namespaces/gc-b/configmaps').send({ metadata: { name: 'two', ownerReferences: refs } }).expect(201);
    let kept: Array<{ name: string }> = [];
    await eventually(async () => {
      kept = (await api().get('/api/v1/namespaces/gc-b/configmaps/two').expect(200)).body.metadata.ownerReferences;
      return kept.length === 1;
    }, { timeoutMs: 15_000, message: 'invalid reference removed' });
    assert.equal(kept[0].name, 'near');
  });

  it('leaves a cluster-scoped dependent naming a namespaced owner, with the event in default', async () => {
    const owner = (await api().post('/api/v1/namespaces/gc-a/configmaps').send({ metadata: { name: 'ns-owner' } }).expect(201)).body;
    const ns = (await api()
      .post('/api/v1/namespaces')
      .send({ metadata: { name: 'owned-ns', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'ns-owner', uid: owner.metadata.uid }] } })
      .expect(201)).body;
    let events: Array<{ involvedObject: { uid: string; namespace?: string }; message: string }> = [];
    await eventually(async () => {
      events = (await api().get('/api/v1/namespaces/default/events?fieldSelector=reason%3DOwnerRefInvalidNamespace').expect(200)).body.items;
      return events.some((e) => e.involvedObject.uid === ns.metadata.uid);
    }, { timeoutMs: 15_000, message: 'event recorded in default' });
    const e = events.find((x) => x.involvedObject.uid === ns.metadata.uid)!;
    assert.equal(e.involvedObject.namespace, undefined);
    assert.equal(e.message, `ownerRef [v1/ConfigMap, namespace: , name: ns-owner, uid: ${owner.metadata.uid}] does not exist in namespace ""`);
    const still = (await api().get('/api/v1/namespaces/owned-ns').expect(200)).body;
    assert.equal(still.metadata.ownerReferences.length, 1);
    assert.equal(still.metadata.deletionTimestamp, undefined);
  });
});
