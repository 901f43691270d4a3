import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import type { RunningServer } from '../../apps/api/src/app/server.js';
import { allow, deny, makeCertificates, type TestCertificates, TestWebhookServer, webhookConfiguration } from '../admission/support/webhook-server.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { TestCluster } from '../watch/support/cluster.js';
import { installCrd, widgetCrd } from './crd-fixtures.js';
import { WatchService } from '../../apps/api/src/watch/watch.service.js';
import { eventually } from '../support/eventually.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';

/** The newest revision this replica's change stream has applied. */
const applied = (r: RunningServer) => r.app.get(WatchService).pipeline.cache.revision;

/** Resolves once `r`'s stream has applied `revision`; what it serves must reflect that revision from then on. */
async function reached(r: RunningServer, revision: number): Promise<void> {
  await eventually(() => applied(r) >= revision, { message: `replica stream at ${revision}` });
}

/** The newest committed revision, as a list reports it. */
async function committed(api: ReturnType<typeof request>): Promise<number> {
  return Number((await api.get('/api/v1/namespaces').expect(200)).body.metadata.resourceVersion);
}

/**
 * The CRD cache and the webhook configuration cache follow the change
 * stream every replica runs (no polling): a change made through one replica
 * is served by another as soon as that replica's stream reaches its
 * revision, and by the replica that took the write on the writer's next
 * request.
 */
describe('CRD and webhook configuration caches across two replicas', () => {
  let cluster: TestCluster;
  let a: ReturnType<typeof request>;
  let b: ReturnType<typeof request>;
  let certs: TestCertificates;
  let hooks: TestWebhookServer;

  before(async () => {
    const redisUrl = process.env.PLINTH_TEST_REDIS_URL;
    assert.ok(redisUrl, 'PLINTH_TEST_REDIS_URL is not set: run with test/run-tests.mjs (redis-server must be installed)');
    certs = await makeCertificates();
    hooks = await TestWebhookServer.start(certs);
    cluster = await TestCluster.start('crd-replicas', 2, redisUrl, { PLINTH_WEBHOOK_TRUSTED_TENANTS: 'default' });
    a = request(cluster.replicas[0].url);
    b = request(cluster.replicas[1].url);
    await a.post('/api/v1/namespaces').send({ metadata: { name: 'demo', labels: { test: 'demo' } } }).expect(201);
  });
  after(async () => {
    await cluster?.close();
    await hooks?.close();
  });

  it('serves a CRD created through one replica on the other once its stream reaches the revision, and stops serving it after the deletion likewise', async () => {
    const [ra, rb] = cluster.replicas;
    await b.get('/apis/replicas.example.com/v1/namespaces/demo/widgets').expect(404);
    await installCrd(a, widgetCrd({ group: 'replicas.example.com' }));
    await reached(rb, await committed(a));
    await b.get('/apis/replicas.example.com/v1/namespaces/demo/widgets').expect(200);
    const disc = await b.get('/apis/replicas.example.com/v1').expect(200);
    assert.deepEqual(disc.body.resources.map((r: { name: string }) => r.name), ['widgets']);
    await b.post('/apis/replicas.example.com/v1/namespaces/demo/widgets').send({ metadata: { name: 'w' }, spec: { size: 1 } }).expect(201);

    await b.delete(`${CRDS}/widgets.replicas.example.com`).expect((r) => assert.ok(r.status < 300));
    await eventually(async () => (await b.get(`${CRDS}/widgets.replicas.example.com`)).status === 404, { message: 'CRD removed' });
    await reached(ra, await committed(b));
    await a.get('/apis/replicas.example.com/v1/namespaces/demo/widgets').expect(404);
    const groups = await a.get('/apis').expect(200);
    assert.ok(!groups.body.groups.some((g: { name: string }) => g.name === 'replicas.example.com'));
  });

  it('serves a new CRD on the next request to the replica that created it', async () => {
    await a.post(CRDS).send(widgetCrd({ group: 'fresh.example.com' })).expect(201);
    await a.get('/apis/fresh.example.com/v1/namespaces/demo/widgets').expect(200);
    const disc = await a.get('/apis/fresh.example.com/v1').expect(200);
    assert.deepEqual(disc.body.resources.map((r: { name: string }) => r.name), ['widgets']);
  });

  it('serves a CRD change on the next request to the replica that took it', async () => {
    await installCrd(a, widgetCrd({ group: 'change.example.com' }));
    const strict = '/apis/change.example.com/v1/namespaces/demo/widgets?fieldValidation=Strict';
    const before = await a.post(strict).send({ metadata: { name: 'x' }, spec: { size: 1, shade: 'dark' } }).expect(400);
    assert.match(before.body.message, /unknown field "spec\.shade"/);
    const crd = (await a.get(`${CRDS}/widgets.change.example.com`).expect(200)).body;
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.shade = { type: 'string' };
    await a.put(`${CRDS}/widgets.change.example.com`).send(crd).expect(200);
    const created = await a.post(strict).send({ metadata: { name: 'x' }, spec: { size: 1, shade: 'dark' } }).expect(201);
    assert.equal(created.body.spec.shade, 'dark');
  });

  it('kubectl delete crd, then kubectl api-resources on the same replica, no longer lists the resource', async () => {
    await installCrd(a, widgetCrd({ group: 'gone.example.com', plural: 'gizmos', kind: 'Gizmo' }));
    const kc = writeTestKubeconfig(cluster.replicas[0].url);
    const listed = await kubectl(kc, ['api-resources', '--api-group=gone.example.com', '-o', 'name']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(listed.stdout.trim(), 'gizmos.gone.example.com');
    const del = await kubectl(kc, ['delete', 'crd', 'gizmos.gone.example.com']);
    assert.equal(del.code, 0, del.stderr);
    const after = await kubectl(kc, ['api-resources', '--api-group=gone.example.com', '-o', 'name']);
    assert.equal(after.code, 0, after.stderr);
    assert.equal(after.stdout.trim(), '');
  });

  it('applies a webhook configuration on the next request to the replica that took it, and on the other once its stream reaches the revision', async () => {
    const [ra, rb] = cluster.replicas;
    hooks.on('/deny', (req) => (req.object?.data?.bad === 'yes' ? deny('no bad data') : allow()));
    const bad = (name: string) => ({ metadata: { name }, data: { bad: 'yes' } });
    const hook = { name: 'deny.plinth.test', url: hooks.url('/deny'), caBundle: certs.caBundle, namespaceSelector: { matchLabels: { test: 'demo' } } };
    await a.post('/api/v1/namespaces/demo/configmaps').send(bad('before')).expect(201);
    await a.post(VWC).send(webhookConfiguration('Validating', 'deny', [hook])).expect(201);
    const onA = await a.post('/api/v1/namespaces/demo/configmaps').send(bad('a1')).expect(403);
    assert.match(onA.body.message, /no bad data/);
    await reached(rb, await committed(a));
    await b.post('/api/v1/namespaces/demo/configmaps').send(bad('b1')).expect(403);

    await b.delete(`${VWC}/deny`).expect(200);
    await b.post('/api/v1/namespaces/demo/configmaps').send(bad('b2')).expect(201);
    await reached(ra, await committed(b));
    await a.post('/api/v1/namespaces/demo/configmaps').send(bad('a2')).expect(201);
  });
});
