import assert from 'node:assert/strict';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';

const NS = '/api/v1/namespaces';
const CM = 'kube-root-ca.crt';
const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';

/** Status of a GET of `url`'s /version trusting only `caPem` (no client certificate). */
function getTrusting(url: string, caPem: string): Promise<number> {
  return new Promise((resolve, reject) => {
    https.get(`${url}/version`, { ca: caPem, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
}

// Upstream's root CA publisher: kube-root-ca.crt in every namespace of every tenant, kept as it publishes it.
describe('kube-root-ca.crt in every namespace (root CA publisher)', { timeout: 120_000 }, () => {
  let s: TestServer;
  const api = () => request(s.url);

  before(async () => {
    s = await startTestServer('root-ca', { PLINTH_TENANTS: 'acme' });
  });
  after(async () => s?.close());

  it('is in a namespace as soon as its create is answered, with the CA that verifies the server and upstream annotation', async () => {
    await api().post(NS).send({ metadata: { name: 'fresh' } }).expect(201);
    const cm = (await api().get(`${NS}/fresh/configmaps/${CM}`).expect(200)).body;
    assert.equal(cm.data['ca.crt'], s.pki.caPem);
    assert.deepEqual(Object.keys(cm.data), ['ca.crt']);
    assert.match(cm.metadata.annotations[DESCRIPTION_ANNOTATION], /^Contains a CA bundle that can be used to verify the kube-apiserver/);
    // What it holds is what a client needs to trust this server's certificate.
    assert.equal(await getTrusting(s.url, cm.data['ca.crt']), 200);
    await assert.rejects(getTrusting(s.url, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'));
  });

  it('is in the namespaces of every tenant, those provisioned at start included', async () => {
    for (const base of ['', '/clusters/acme']) {
      for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
        const cm = (await api().get(`${base}${NS}/${ns}/configmaps/${CM}`).expect(200)).body;
        assert.equal(cm.data['ca.crt'], s.pki.caPem, `${base} ${ns}`);
      }
    }
  });

  it('is recreated when deleted', async () => {
    await api().post(NS).send({ metadata: { name: 'recreate' } }).expect(201);
    const before = (await api().get(`${NS}/recreate/configmaps/${CM}`).expect(200)).body;
    await api().delete(`${NS}/recreate/configmaps/${CM}`).expect(200);
    await eventually(async () => {
      const res = await api().get(`${NS}/recreate/configmaps/${CM}`);
      return res.status === 200 && res.body.metadata.uid !== before.metadata.uid;
    }, { timeoutMs: 15_000, message: 'recreated' });
    const cm = (await api().get(`${NS}/recreate/configmaps/${CM}`).expect(200)).body;
    assert.equal(cm.data['ca.crt'], s.pki.caPem);
  });

  it('is restored when its data or annotation is edited, keeping other metadata (kubectl)', async () => {
    const kc = writeTestKubeconfig(s.url);
    await api().post(NS).send({ metadata: { name: 'edited' } }).expect(201);
    const patch = JSON.stringify({ metadata: { labels: { team: 'a' }, annotations: { [DESCRIPTION_ANNOTATION]: null } }, data: { 'ca.crt': 'tampered', extra: 'x' } });
    const res = await kubectl(kc, ['patch', 'configmap', CM, '-n', 'edited', '--type=merge', '-p', patch]);
    assert.equal(res.code, 0, res.stderr);
    await eventually(async () => {
      const cm = (await api().get(`${NS}/edited/configmaps/${CM}`).expect(200)).body;
      return cm.data['ca.crt'] === s.pki.caPem;
    }, { timeoutMs: 15_000, message: 'restored' });
    const cm = (await api().get(`${NS}/edited/configmaps/${CM}`).expect(200)).body;
    assert.deepEqual(cm.data, { 'ca.crt': s.pki.caPem });
    assert.match(cm.metadata.annotations[DESCRIPTION_ANNOTATION], /^Contains a CA bundle/);
    assert.deepEqual(cm.metadata.labels, { team: 'a' });
    const got = await kubectl(kc, ['get', 'configmap', CM, '-n', 'edited', '-o', 'jsonpath={.data.ca\\.crt}']);
    assert.equal(got.code, 0, got.stderr);
    assert.equal(got.stdout, s.pki.caPem);
  });

  it('is not recreated in a namespace being deleted, which goes away', async () => {
    await api().post(NS).send({ metadata: { name: 'leaving' } }).expect(201);
    await api().post(`${NS}/leaving/configmaps`).send({ metadata: { name: 'held', finalizers: ['example.com/hold'] } }).expect(201);
    await api().delete(`${NS}/leaving`).expect(202);
    await eventually(async () => (await api().get(`${NS}/leaving/configmaps/${CM}`)).status === 404, { timeoutMs: 15_000, message: 'removed with its namespace' });
    // While the namespace waits on the held ConfigMap, the publisher leaves it alone.
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await api().get(`${NS}/leaving/configmaps/${CM}`)).status, 404);
    await api().patch(`${NS}/leaving/configmaps/held`).set('Content-Type', 'application/merge-patch+json').send(JSON.stringify({ metadata: { finalizers: null } })).expect(200);
    await eventually(async () => (await api().get(`${NS}/leaving`)).status === 404, { timeoutMs: 15_000, message: 'namespace gone' });
  });
});
