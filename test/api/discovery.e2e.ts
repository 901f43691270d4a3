import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';

const AGG = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

describe('version, discovery and OpenAPI', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('discovery', { PLINTH_TENANTS: 'acme' });
    api = request(s.url);
  });
  after(async () => s.close());

  it('serves /version as a 1.35 version.Info: major and minor, emulation and minimum compatibility versions', async () => {
    const res = await api.get('/version').expect(200);
    assert.equal(res.body.major, '1');
    assert.equal(res.body.minor, '35');
    assert.match(res.body.gitVersion, /^v1\.35\.0\+plinth-\d+\.\d+\.\d+$/);
    assert.ok(res.body.platform);
    // 1.33+ report the emulation version (the binary's, by default) and the minimum compatibility version (one minor below), in upstream's field order.
    assert.deepEqual(Object.keys(res.body).slice(0, 7), ['major', 'minor', 'emulationMajor', 'emulationMinor', 'minCompatibilityMajor', 'minCompatibilityMinor', 'gitVersion']);
    assert.deepEqual([res.body.emulationMajor, res.body.emulationMinor, res.body.minCompatibilityMajor, res.body.minCompatibilityMinor], ['1', '35', '1', '34']);
  });

  it('serves legacy discovery: /api, /api/v1 with main resources before subresources, /apis', async () => {
    assert.deepEqual((await api.get('/api').expect(200)).body.versions, ['v1']);
    const v1 = (await api.get('/api/v1').expect(200)).body;
    assert.equal(v1.kind, 'APIResourceList');
    assert.equal(v1.groupVersion, 'v1');
    const names = v1.resources.map((r: { name: string }) => r.name);
    assert.ok(names.indexOf('namespaces') < names.indexOf('namespaces/status'));
    const cm = v1.resources.find((r: { name: string }) => r.name === 'configmaps');
    assert.deepEqual(cm.shortNames, ['cm']);
    assert.equal(cm.namespaced, true);
    assert.equal(cm.kind, 'ConfigMap');
    assert.ok(cm.verbs.includes('watch'));
    const apis = (await api.get('/apis').expect(200)).body;
    assert.equal(apis.kind, 'APIGroupList');
  });

  it('serves aggregated discovery with the Content-Type naming its format', async () => {
    const res = await api.get('/api').set('Accept', AGG).expect(200);
    assert.equal(res.headers['content-type'], 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    assert.equal(res.body.kind, 'APIGroupDiscoveryList');
    const core = res.body.items[0];
    assert.equal(core.metadata.name, '');
    const ns = core.versions[0].resources.find((r: { resource: string }) => r.resource === 'namespaces');
    assert.equal(ns.scope, 'Cluster');
    assert.deepEqual(ns.responseKind, { group: '', version: 'v1', kind: 'Namespace' });
    assert.ok(ns.subresources.some((sr: { subresource: string }) => sr.subresource === 'status'));
    const apis = await api.get('/apis').set('Accept', AGG).expect(200);
    assert.equal(apis.body.kind, 'APIGroupDiscoveryList');
  });

  it("publishes each main resource's storageVersionHash as upstream computes it, and none for subresources", async () => {
    const v1 = (await api.get('/api/v1').expect(200)).body;
    const hash = (name: string) => v1.resources.find((r: { name: string }) => r.name === name).storageVersionHash;
    // The values kube-apiserver publishes (unchanged 1.32 to 1.35) (base64 of sha256("/v1/<Kind>")[:8]).
    assert.equal(hash('configmaps'), 'qFsyl6wFWjQ=');
    assert.equal(hash('namespaces'), 'Q3oi5N2YM8M=');
    assert.equal(hash('secrets'), 'S6u1pOWzb84=');
    assert.equal(hash('namespaces/status'), undefined);
  });

  it('serves discovery under a tenant prefix and 404s an unknown group', async () => {
    await api.get('/clusters/acme/api/v1').expect(200);
    await api.get('/apis/nope.example.com').expect(404);
  });

  it('serves /openapi/v2 as JSON with an ETag honoured by If-None-Match, and as protobuf on request', async () => {
    const res = await api.get('/openapi/v2').expect(200);
    const etag = res.headers.etag;
    assert.ok(etag);
    assert.ok(res.body.definitions['io.k8s.api.core.v1.ConfigMap']);
    assert.deepEqual(res.body.definitions['io.k8s.api.core.v1.ConfigMap']['x-kubernetes-group-version-kind'], [{ group: '', kind: 'ConfigMap', version: 'v1' }]);
    await api.get('/openapi/v2').set('If-None-Match', etag).expect(304);
    const proto = await api
      .get('/openapi/v2')
      .set('Accept', 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf')
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      })
      .expect(200);
    // kube-openapi answers the '@' request with the '.' form: Go's mime.ParseMediaType refuses '@'.
    assert.equal(proto.headers['content-type'], 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    assert.ok((proto.body as Buffer).includes(Buffer.from('io.k8s.api.core.v1.ConfigMap')));
  });

  it('serves the /openapi/v3 index and a group-version document with fieldValidation on PATCH', async () => {
    const index = (await api.get('/openapi/v3').expect(200)).body;
    const url = index.paths['api/v1'].serverRelativeURL;
    assert.match(url, /^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]+$/);
    const doc = await api.get(url).expect(200);
    assert.match(doc.headers['cache-control'], /immutable/);
    const patch = doc.body.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'].patch;
    // kubectl enables server-side field validation only when the PATCH operation itself lists this parameter.
    assert.ok(patch.parameters.some((p: { name: string; in: string }) => p.name === 'fieldValidation' && p.in === 'query'));
    assert.deepEqual(patch['x-kubernetes-group-version-kind'], { group: '', kind: 'ConfigMap', version: 'v1' });
    await api.get(url).set('If-None-Match', doc.headers.etag).expect(304);
  });
});
