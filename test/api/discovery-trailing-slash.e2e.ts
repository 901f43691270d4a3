import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const AGG = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
const PATHS = ['/api', '/apis', '/api/v1', '/apis/apiextensions.k8s.io', '/apis/apiextensions.k8s.io/v1', '/version'];

// kube-apiserver's discovery routes (go-restful, and the CRD discovery handlers) match a path with a trailing
// slash as the same path; upstream's kubectl proxy tests request `/api/` and `/apis/`.
describe('discovery with a trailing slash', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('discovery-slash', { PLINTH_TENANTS: 'acme' });
    api = request(s.url);
  });
  after(async () => s?.close());

  for (const prefix of ['', '/clusters/acme']) {
    it(`serves the same documents with and without the slash${prefix ? ' in a tenant' : ''}`, async () => {
      for (const p of PATHS) {
        const bare = await api.get(`${prefix}${p}`).expect(200);
        const slashed = await api.get(`${prefix}${p}/`);
        assert.equal(slashed.status, 200, `${prefix}${p}/: ${slashed.text}`);
        assert.deepEqual(slashed.body, bare.body, `${prefix}${p}/`);
      }
    });
  }

  it('answers kubectl get --raw on the slashed paths', async () => {
    const kc = writeTestKubeconfig(s.url);
    const group = await kubectl(kc, ['get', '--raw', '/apis/apiextensions.k8s.io/']);
    assert.equal(group.code, 0, group.stderr);
    assert.equal(JSON.parse(group.stdout).name, 'apiextensions.k8s.io');
    const core = await kubectl(kc, ['get', '--raw', '/api/v1/']);
    assert.equal(core.code, 0, core.stderr);
    assert.equal(JSON.parse(core.stdout).groupVersion, 'v1');
  });

  it('serves aggregated discovery at /api/ and /apis/ when asked for it', async () => {
    for (const p of ['/api', '/apis']) {
      const bare = await api.get(p).set('Accept', AGG).expect(200);
      const slashed = await api.get(`${p}/`).set('Accept', AGG).expect(200);
      assert.equal(slashed.headers['content-type'], bare.headers['content-type']);
      assert.deepEqual(JSON.parse(slashed.text), JSON.parse(bare.text));
    }
  });

  it('still answers 404 for a group or version that does not exist', async () => {
    await api.get('/apis/nothing.example.com/').expect(404);
    await api.get('/api/v2/').expect(404);
  });
});
