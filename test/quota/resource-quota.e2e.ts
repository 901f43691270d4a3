import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';

const quotaPath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/resourcequotas${name ? `/${name}` : ''}`;

// ResourceQuota object counts as upstream, exact under racing writers (counted in each write's transaction).
describe('ResourceQuota', { timeout: 180_000 }, () => {
  let s: TestServer;
  let kc: string;
  const api = () => request(s.url);
  const cm = (ns: string, name: string) => api().post(`/api/v1/namespaces/${ns}/configmaps`).send({ metadata: { name } });

  before(async () => {
    s = await startTestServer('resource-quota');
    kc = writeTestKubeconfig(s.url);
    for (const ns of ['q1', 'q2', 'q3']) await api().post('/api/v1/namespaces').send({ metadata: { name: ns } }).expect(201);
  });
  after(async () => s?.close());

  it('kubectl create quota; 16 racing writers get exactly the room left, with upstream\'s message; deletes give it back', async () => {
    // As upstream, the namespace's kube-root-ca.crt counts: one used at once, room for five more.
    const created = await kubectl(kc, ['create', 'quota', 'q', '--hard=count/configmaps=6,secrets=2', '-n', 'q1']);
    assert.equal(created.code, 0, created.stderr);
    const quota = (await api().get(quotaPath('q1', 'q')).expect(200)).body;
    assert.deepEqual(quota.status.hard, { 'count/configmaps': '6', secrets: '2' });
    assert.deepEqual(quota.status.used, { 'count/configmaps': '1', secrets: '0' });
    for (const [round, room] of [[0, 5], [1, 3]] as const) {
      const results = await Promise.all(Array.from({ length: 16 }, (_, i) => cm('q1', `r${round}-${i}`)));
      const ok = results.filter((r) => r.status === 201).length;
      assert.equal(ok, room, results.map((r) => r.status).join(','));
      const refused = results.find((r) => r.status === 403)!;
      assert.equal(refused.body.message, `configmaps "${refused.body.details.name}" is forbidden: exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=6, limited: count/configmaps=6`);
      if (round === 0) {
        for (const n of ['r0-0', 'r0-1', 'r0-2', 'r0-3', 'r0-4', 'r0-5', 'r0-6', 'r0-7', 'r0-8', 'r0-9', 'r0-10', 'r0-11', 'r0-12', 'r0-13', 'r0-14', 'r0-15'].slice(0, 16)) {
          await api().delete(`/api/v1/namespaces/q1/configmaps/${n}`);
        }
        // Room for five again; two more objects make three.
        await cm('q1', 'keep-1').expect(201);
        await cm('q1', 'keep-2').expect(201);
      }
    }
    await api().post('/api/v1/namespaces/q1/secrets').send({ metadata: { name: 's1' } }).expect(201);
    await api().post('/api/v1/namespaces/q1/secrets').send({ metadata: { name: 's2' } }).expect(201);
    const s3 = await api().post('/api/v1/namespaces/q1/secrets').send({ metadata: { name: 's3' } }).expect(403);
    assert.match(s3.body.message, /exceeded quota: q, requested: secrets=1, used: secrets=2, limited: secrets=2$/);
    // Other namespaces are not limited by it.
    await cm('q3', 'free').expect(201);
    // The periodic status pass may have reported five configmaps before the secrets were written: wait for both.
    await eventually(async () => {
        const used = (await api().get(quotaPath('q1', 'q'))).body.status.used;
        return used['count/configmaps'] === '6' && used.secrets === '2';
      }, { timeoutMs: 15_000, message: 'status.used follows' });
    const described = await kubectl(kc, ['describe', 'quota', 'q', '-n', 'q1']);
    assert.equal(described.code, 0, described.stderr);
    assert.match(described.stdout, /count\/configmaps\s+6\s+6/);
    assert.match(described.stdout, /secrets\s+2\s+2/);
    const table = await kubectl(kc, ['get', 'quota', '-n', 'q1']);
    assert.match(table.stdout, /^NAME\s+AGE\s+REQUEST\s+LIMIT\n/);
    assert.match(table.stdout, /\nq\s+\S+\s+count\/configmaps: 6\/6, secrets: 2\/2\s*\n/);
  });

  it('counts what a namespace holds when a quota is created, enforces every quota of a namespace, and lets go of a deleted one', async () => {
    for (let i = 0; i < 4; i++) await cm('q2', `pre-${i}`).expect(201);
    await api().post(quotaPath('q2')).send({ metadata: { name: 'wide' }, spec: { hard: { 'count/configmaps': '100' } } }).expect(201);
    const tight = await api().post(quotaPath('q2')).send({ metadata: { name: 'tight' }, spec: { hard: { configmaps: '7' } } }).expect(201);
    assert.deepEqual(tight.body.status.used, { configmaps: '5' }, 'the four made before the quota, and kube-root-ca.crt');
    await cm('q2', 'fifth').expect(201);
    await cm('q2', 'sixth').expect(201);
    const refused = await cm('q2', 'seventh').expect(403);
    assert.match(refused.body.message, /exceeded quota: tight, requested: configmaps=1, used: configmaps=7, limited: configmaps=7$/);
    await api().delete(quotaPath('q2', 'tight')).expect(200);
    await cm('q2', 'seventh').expect(201);
  });

  it('counts custom resources by count/<resource>.<group>, and validates spec.hard as upstream', async () => {
    await api()
      .post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions')
      .send({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'widgets.example.com' },
        spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'widgets', kind: 'Widget' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }] },
      })
      .expect(201);
    await api().post(quotaPath('q3')).send({ metadata: { name: 'crs' }, spec: { hard: { 'count/widgets.example.com': '1' } } }).expect(201);
    const widget = (name: string) => api().post('/apis/example.com/v1/namespaces/q3/widgets').send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name } });
    await eventually(async () => (await widget('w1')).status === 201, { timeoutMs: 10_000, message: 'the CRD is served' });
    const second = await widget('w2').expect(403);
    assert.match(second.body.message, /exceeded quota: crs, requested: count\/widgets.example.com=1, used: count\/widgets.example.com=1, limited: count\/widgets.example.com=1$/);
    const bad = await api().post(quotaPath('q3')).send({ metadata: { name: 'bad' }, spec: { hard: { 'count/configmaps': '-1', secrets: 'lots' } } }).expect(422);
    assert.deepEqual(bad.body.details.causes.map((c: { field: string }) => c.field).sort(), ['spec.hard[count/configmaps]', 'spec.hard[secrets]']);
  });
});
