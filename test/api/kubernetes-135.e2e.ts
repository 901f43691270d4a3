import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';
import { installCrd, widgetCrd } from '../crd/crd-fixtures.js';

const V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** What kube-apiserver 1.33–1.35 changed in the APIs Plinth serves (docs/compatibility.md). */
describe('the 1.33–1.35 API changes a client observes', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('kubernetes-135');
    api = request(s.url);
  });
  after(async () => s.close());

  it('serves aggregated discovery as apidiscovery.k8s.io/v2 only: a v2beta1 request falls back to the legacy document (1.33)', async () => {
    const v2 = await api.get('/apis').set('Accept', `${V2},${V2BETA1},application/json`).expect(200);
    assert.equal(v2.headers['content-type'], V2);
    assert.equal(v2.body.apiVersion, 'apidiscovery.k8s.io/v2');
    const beta = await api.get('/apis').set('Accept', `${V2BETA1},application/json`).expect(200);
    assert.match(beta.headers['content-type'], /^application\/json(;|$)/);
    assert.equal(beta.body.kind, 'APIGroupList');
    const core = await api.get('/api').set('Accept', `${V2BETA1},application/json`).expect(200);
    assert.equal(core.body.kind, 'APIVersions');
  });

  it('omits a zero creationTimestamp instead of writing null (1.34): discovery groups, access reviews, token reviews', async () => {
    const disc = (await api.get('/apis').set('Accept', V2).expect(200)).body;
    for (const g of disc.items) assert.deepEqual(Object.keys(g.metadata), ['name'], JSON.stringify(g.metadata));
    // kubectl up to 1.33 sends `metadata: {creationTimestamp: null}`; 1.34+ servers answer `metadata: {}`.
    const spec = { user: 'bob', resourceAttributes: { verb: 'get', resource: 'configmaps', namespace: 'default' } };
    const sar = await api.post('/apis/authorization.k8s.io/v1/subjectaccessreviews').send({ metadata: { creationTimestamp: null }, spec }).expect(201);
    assert.deepEqual(sar.body.metadata, {});
    assert.equal(sar.body.status.allowed, false);
    const ssar = await api.post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews').send({ spec: { resourceAttributes: { verb: 'get', resource: 'configmaps' } } }).expect(201);
    assert.deepEqual(ssar.body.metadata, {});
    assert.equal(ssar.body.status.allowed, true);
    const tr = await api.post('/apis/authentication.k8s.io/v1/tokenreviews').send({ metadata: { creationTimestamp: null }, spec: { token: 'not-a-token' } }).expect(201);
    assert.deepEqual(tr.body.metadata, {});
    assert.notEqual(tr.body.status.authenticated, true);
  });

  it('validates the k8s-short-name and k8s-long-name formats in CRD schemas (1.34)', async () => {
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { short: { type: 'string', format: 'k8s-short-name' }, long: { type: 'string', format: 'k8s-long-name' } },
        },
      },
    };
    await installCrd(api, widgetCrd({ group: 'formats.example.com', plural: 'names', kind: 'Name', schema }));
    const path = '/apis/formats.example.com/v1/namespaces/default/names';
    const make = (name: string, spec: Record<string, unknown>) => api.post(path).send({ apiVersion: 'formats.example.com/v1', kind: 'Name', metadata: { name }, spec });
    assert.equal((await make('good', { short: 'web-1', long: 'a.b-c.' + 'x'.repeat(70) })).status, 201, 'a long name has no 63-character limit per segment');
    const bad = await make('bad', { short: 'Web_1', long: 'a..b' });
    assert.equal(bad.status, 422, JSON.stringify(bad.body));
    const messages = bad.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`);
    assert.ok(messages.some((m: string) => m.includes('spec.short in body must be of type k8s-short-name: "Web_1"')), messages.join('\n'));
    assert.ok(messages.some((m: string) => m.includes('spec.long in body must be of type k8s-long-name: "a..b"')), messages.join('\n'));
    const tooLong = await make('too-long', { short: 'a'.repeat(64) });
    assert.equal(tooLong.status, 422, 'a short name is at most 63 characters');
  });

  it("stamps the CRD's conditions with the generation they were computed from (1.35)", async () => {
    await installCrd(api, widgetCrd({ group: 'gen.example.com' }));
    const name = 'widgets.gen.example.com';
    const conditions = async () => (await api.get(`${CRDS}/${name}`).expect(200)).body.status.conditions as Array<{ type: string; observedGeneration?: number }>;
    const first = await conditions();
    for (const type of ['NamesAccepted', 'Established']) assert.equal(first.find((c) => c.type === type)?.observedGeneration, 1, type);
    // A change of names (a new short name) bumps the generation; the naming controller rewrites NamesAccepted with it.
    await api.patch(`${CRDS}/${name}`).set('Content-Type', 'application/merge-patch+json').send({ spec: { names: { shortNames: ['gw'] } } }).expect(200);
    await eventually(async () => (await conditions()).find((c) => c.type === 'NamesAccepted')?.observedGeneration === 2, { timeoutMs: 5000, message: 'NamesAccepted observedGeneration 2' });
    const openapi = (await api.get('/openapi/v2').expect(200)).body;
    const cond = openapi.definitions['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionCondition'];
    assert.equal(cond.properties.observedGeneration.format, 'int64');
  });
});
