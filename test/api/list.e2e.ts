import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { ROOT_CA_CONFIGMAP, withoutRootCa } from '../support/root-ca.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

type Item = { metadata: { name: string; namespace?: string } };
/** Names of the listed ConfigMaps, without the kube-root-ca.crt every namespace holds. */
const names = (body: { items: Item[] }) => withoutRootCa(body.items).map((i) => i.metadata.name);
const keys = (body: { items: Item[] }) => withoutRootCa(body.items).map((i) => `${i.metadata.namespace}/${i.metadata.name}`);
/** The kube-root-ca.crt of each of `namespaces`, as an all-namespaces list shows it. */
const published = (...namespaces: string[]) => namespaces.map((ns) => `${ns}/${ROOT_CA_CONFIGMAP}`);

describe('lists: selectors, paging and resourceVersion semantics', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('list');
    api = request(s.url);
    for (const ns of ['a', 'b']) await api.post('/api/v1/namespaces').send({ metadata: { name: ns } }).expect(201);
    const cms: Array<[string, string, Record<string, string>]> = [
      ['a', 'web-1', { app: 'web', tier: 'front' }],
      ['a', 'web-2', { app: 'web', tier: 'back' }],
      ['a', 'db-1', { app: 'db' }],
      ['b', 'web-3', { app: 'web', tier: 'front' }],
      ['b', 'misc', {}],
    ];
    for (const [ns, name, labels] of cms) await api.post(`/api/v1/namespaces/${ns}/configmaps`).send({ metadata: { name, labels } }).expect(201);
    await api.post('/api/v1/namespaces/a/secrets').send({ metadata: { name: 'tls' }, type: 'kubernetes.io/tls', data: { 'tls.crt': 'eA==', 'tls.key': 'eA==' } }).expect(201);
    await api.post('/api/v1/namespaces/a/secrets').send({ metadata: { name: 'plain' }, data: { x: 'eA==' } }).expect(201);
  });
  after(async () => s.close());

  it('lists a namespace with kind ConfigMapList and a resourceVersion', async () => {
    const res = await api.get('/api/v1/namespaces/a/configmaps').expect(200);
    assert.equal(res.body.kind, 'ConfigMapList');
    assert.equal(res.body.apiVersion, 'v1');
    assert.match(res.body.metadata.resourceVersion, /^\d+$/);
    assert.deepEqual(res.body.items.map((i: Item) => i.metadata.name), ['db-1', ROOT_CA_CONFIGMAP, 'web-1', 'web-2']);
  });

  it('lists across all namespaces in namespace/name order', async () => {
    const res = await api.get('/api/v1/configmaps').expect(200);
    assert.deepEqual(res.body.items.map((i: Item) => `${i.metadata.namespace}/${i.metadata.name}`), [
      'a/db-1',
      ...published('a'),
      'a/web-1',
      'a/web-2',
      ...published('b'),
      'b/misc',
      'b/web-3',
      ...published('default', 'kube-node-lease', 'kube-public', 'kube-system'),
    ]);
  });

  for (const [sel, want] of [
    ['app=web', ['a/web-1', 'a/web-2', 'b/web-3']],
    ['app==web,tier!=back', ['a/web-1', 'b/web-3']],
    ['tier in (front,back)', ['a/web-1', 'a/web-2', 'b/web-3']],
    ['app notin (web)', ['a/db-1', 'b/misc']],
    ['tier', ['a/web-1', 'a/web-2', 'b/web-3']],
    ['!tier', ['a/db-1', 'b/misc']],
  ] as Array<[string, string[]]>) {
    it(`filters with labelSelector ${sel}`, async () => {
      const res = await api.get('/api/v1/configmaps').query({ labelSelector: sel }).expect(200);
      assert.deepEqual(keys(res.body), want);
    });
  }

  it('answers a malformed label selector with 400', async () => {
    const res = await api.get('/api/v1/configmaps').query({ labelSelector: 'app in web' }).expect(400);
    assert.equal(res.body.reason, 'BadRequest');
  });

  it('filters by metadata.name, metadata.namespace and secret type; other fields are 400', async () => {
    assert.deepEqual(names((await api.get('/api/v1/configmaps').query({ fieldSelector: 'metadata.name=web-3' }).expect(200)).body), ['web-3']);
    assert.deepEqual(names((await api.get('/api/v1/configmaps').query({ fieldSelector: 'metadata.namespace=b' }).expect(200)).body), ['misc', 'web-3']);
    assert.deepEqual(names((await api.get('/api/v1/configmaps').query({ fieldSelector: 'metadata.namespace!=a,metadata.name!=misc' }).expect(200)).body), ['web-3']);
    assert.deepEqual(names((await api.get('/api/v1/secrets').query({ fieldSelector: 'type=kubernetes.io/tls' }).expect(200)).body), ['tls']);
    const bad = await api.get('/api/v1/configmaps').query({ fieldSelector: 'data.foo=bar' }).expect(400);
    assert.equal(bad.body.message, 'field label not supported: data.foo');
  });

  it('pages with limit/continue over one snapshot, with remainingItemCount', async () => {
    // Eleven ConfigMaps: the test's five and the kube-root-ca.crt of a, b, default and the three kube-* namespaces.
    const all = (body: { items: Item[] }) => body.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`);
    const p1 = (await api.get('/api/v1/configmaps').query({ limit: 4 }).expect(200)).body;
    assert.deepEqual(all(p1), ['a/db-1', ...published('a'), 'a/web-1', 'a/web-2']);
    assert.equal(p1.metadata.remainingItemCount, 7);
    assert.ok(p1.metadata.continue);
    await api.post('/api/v1/namespaces/a/configmaps').send({ metadata: { name: 'zz-late' } }).expect(201);
    await api.delete('/api/v1/namespaces/b/configmaps/misc').expect(200);
    const p2 = (await api.get('/api/v1/configmaps').query({ limit: 4, continue: p1.metadata.continue }).expect(200)).body;
    assert.deepEqual(all(p2), [...published('b'), 'b/misc', 'b/web-3', ...published('default')]);
    assert.equal(p2.metadata.resourceVersion, p1.metadata.resourceVersion);
    const p3 = (await api.get('/api/v1/configmaps').query({ limit: 4, continue: p2.metadata.continue }).expect(200)).body;
    assert.deepEqual(all(p3), published('kube-node-lease', 'kube-public', 'kube-system'));
    assert.equal(p3.metadata.continue, undefined);
    assert.equal(p3.metadata.remainingItemCount, undefined);
    // Restore for later tests.
    await api.post('/api/v1/namespaces/b/configmaps').send({ metadata: { name: 'misc' } }).expect(201);
    await api.delete('/api/v1/namespaces/a/configmaps/zz-late').expect(200);
  });

  it('omits remainingItemCount when a selector is used', async () => {
    const p1 = (await api.get('/api/v1/configmaps').query({ limit: 1, labelSelector: 'app=web' }).expect(200)).body;
    assert.ok(p1.metadata.continue);
    assert.equal(p1.metadata.remainingItemCount, undefined);
  });

  it('answers a malformed continue token with 400 and a resourceVersion beside continue with 400', async () => {
    await api.get('/api/v1/configmaps').query({ limit: 1, continue: 'garbage' }).expect(400);
    const p1 = (await api.get('/api/v1/configmaps').query({ limit: 1 }).expect(200)).body;
    await api.get('/api/v1/configmaps').query({ limit: 1, continue: p1.metadata.continue, resourceVersion: '5' }).expect(400);
  });

  it('lists exactly at a past resourceVersion with resourceVersionMatch=Exact, and with limit', async () => {
    const rv = (await api.get('/api/v1/namespaces/a/configmaps').expect(200)).body.metadata.resourceVersion;
    await api.post('/api/v1/namespaces/a/configmaps').send({ metadata: { name: 'after-rv' } }).expect(201);
    const exact = (await api.get('/api/v1/namespaces/a/configmaps').query({ resourceVersion: rv, resourceVersionMatch: 'Exact' }).expect(200)).body;
    assert.equal(exact.metadata.resourceVersion, rv);
    assert.ok(!names(exact).includes('after-rv'));
    const limited = (await api.get('/api/v1/namespaces/a/configmaps').query({ resourceVersion: rv, limit: 10 }).expect(200)).body;
    assert.equal(limited.metadata.resourceVersion, rv);
    const notOlder = (await api.get('/api/v1/namespaces/a/configmaps').query({ resourceVersion: rv, resourceVersionMatch: 'NotOlderThan' }).expect(200)).body;
    assert.ok(Number(notOlder.metadata.resourceVersion) > Number(rv));
    assert.ok(names(notOlder).includes('after-rv'));
  });

  it('answers the invalid resourceVersionMatch combinations with 422 and the upstream messages', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ resourceVersionMatch: 'Exact' }, 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided'],
      [{ resourceVersionMatch: 'Exact', resourceVersion: '0' }, 'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'],
      [{ sendInitialEvents: 'true' }, 'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list'],
      [{ resourceVersionMatch: 'Bogus', resourceVersion: '1' }, 'resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""'],
    ];
    for (const [q, msg] of cases) {
      const res = await api.get('/api/v1/configmaps').query(q).expect(422);
      assert.equal(res.body.details.kind, 'ListOptions');
      assert.equal(res.body.details.group, 'meta.k8s.io');
      assert.ok(res.body.message.includes(msg), `${res.body.message} lacks ${msg}`);
    }
  });

  it('waits then answers 504 Too large resource version for a future revision, with Retry-After', async () => {
    const res = await api.get('/api/v1/configmaps').query({ resourceVersion: '999999999' }).expect(504);
    assert.equal(res.body.reason, 'Timeout');
    assert.match(res.body.message, /Too large resource version/);
    assert.equal(res.headers['retry-after'], '1');
    assert.equal(res.body.details.causes[0].reason, 'ResourceVersionTooLarge');
  });
});
