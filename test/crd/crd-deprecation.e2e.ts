import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { adminIdentity } from '../support/credentials.js';
import { kubectl, type KubectlResult, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { installCrd } from './crd-fixtures.js';

const WARNING = 'acc.example.com/v1beta1 Old is deprecated; use acc.example.com/v1 Old';
const CUSTOM = 'acc.example.com/v1alpha1 Old is going away: move to v1';

const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } };
const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'olds.acc.example.com' },
  spec: {
    group: 'acc.example.com',
    scope: 'Namespaced',
    names: { plural: 'olds', singular: 'old', kind: 'Old', listKind: 'OldList' },
    versions: [
      { name: 'v1alpha1', served: true, storage: false, deprecated: true, deprecationWarning: CUSTOM, schema, subresources: { status: {} } },
      { name: 'v1beta1', served: true, storage: false, deprecated: true, schema, subresources: { status: {} } },
      { name: 'v1', served: true, storage: true, schema, subresources: { status: {} } },
    ],
  },
};

function ok(r: KubectlResult): KubectlResult {
  assert.equal(r.code, 0, `kubectl failed (${r.code}): ${r.stderr}`);
  return r;
}

/** The Warning header of a watch's first answer, read over HTTP/2 (the stream is then cancelled). */
function watchWarning(url: string, reqPath: string): Promise<string | undefined> {
  const id = adminIdentity();
  const session = http2.connect(url, { ca: id.caPem, cert: id.certPem, key: id.keyPem });
  return new Promise<string | undefined>((resolve, reject) => {
    session.on('error', reject);
    const stream = session.request({ ':path': reqPath });
    stream.on('response', (h) => {
      assert.equal(h[':status'], 200);
      resolve(h.warning === undefined ? undefined : String(h.warning));
      stream.close();
    });
    stream.on('error', () => undefined);
  }).finally(() => session.close());
}

// Upstream's CRD handler adds a deprecated version's warning to every request of that version, before the verb's handler runs.
describe('deprecated custom resource versions warn on every request', () => {
  let s: TestServer;
  let kc: string;
  const k = (args: string[], input?: string) => kubectl(kc, args, input);

  before(async () => {
    s = await startTestServer('crd-deprecation');
    kc = writeTestKubeconfig(s.url);
    await installCrd(request(s.url), crd);
    await request(s.url).post('/apis/acc.example.com/v1/namespaces/default/olds').send({ apiVersion: 'acc.example.com/v1', kind: 'Old', metadata: { name: 'one' }, spec: { size: 1 } }).expect(201);
  });
  after(async () => s?.close());

  it('kubectl get (a list, as a Table) of the deprecated version prints upstream\'s default warning', async () => {
    const r = ok(await k(['get', 'olds.v1beta1.acc.example.com']));
    assert.match(r.stdout, /^one\s/m);
    assert.ok(r.stderr.includes(`Warning: ${WARNING}`), r.stderr);
  });

  it('kubectl get of one object, and of a missing one, warn too', async () => {
    const one = ok(await k(['get', 'olds.v1beta1.acc.example.com', 'one', '-o', 'jsonpath={.apiVersion}']));
    assert.equal(one.stdout, 'acc.example.com/v1beta1');
    assert.ok(one.stderr.includes(`Warning: ${WARNING}`), one.stderr);
    const missing = await k(['get', 'olds.v1beta1.acc.example.com', 'none']);
    assert.notEqual(missing.code, 0);
    assert.ok(missing.stderr.includes(`Warning: ${WARNING}`), missing.stderr);
  });

  it('a version\'s own deprecationWarning replaces the default, on reads of its subresources too', async () => {
    const res = await request(s.url).get('/apis/acc.example.com/v1alpha1/namespaces/default/olds/one/status').expect(200);
    assert.equal(res.headers.warning, `299 - "${CUSTOM}"`);
  });

  it('a watch of the deprecated version carries the warning; the newest version carries none', async () => {
    assert.equal(await watchWarning(s.url, '/apis/acc.example.com/v1beta1/namespaces/default/olds?watch=1'), `299 - "${WARNING}"`);
    const current = ok(await k(['get', 'olds.v1.acc.example.com']));
    assert.ok(!current.stderr.includes('Warning'), current.stderr);
  });
});
