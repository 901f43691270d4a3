import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kubectl, type KubectlResult, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { NOT_ROOT_CA, ROOT_CA_CONFIGMAP } from '../support/root-ca.js';

function ok(r: KubectlResult): string {
  assert.equal(r.code, 0, `kubectl failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

const cm = (value: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  namespace: demo
  labels:
    app: web
data:
  key: "${value}"
`;

describe('kubectl 1.32 against Plinth', () => {
  let s: TestServer;
  let kc: string;
  const k = (args: string[], input?: string) => kubectl(kc, args, input);

  before(async () => {
    s = await startTestServer('kubectl');
    kc = writeTestKubeconfig(s.url);
  });
  after(async () => s.close());

  it('kubectl version reports a 1.35 server', async () => {
    const r = await k(['version', '-o', 'json']);
    const v = JSON.parse(ok(r));
    assert.equal(v.serverVersion.major, '1');
    assert.equal(v.serverVersion.minor, '35');
    assert.match(v.serverVersion.gitVersion, /^v1\.35\.0\+plinth-/);
    // Debian's kubectl is 1.32: three minors behind, it warns about the skew (to stderr) as it does against kube-apiserver 1.35.
    if (v.clientVersion.minor === '32') assert.match(r.stderr, /version difference between client \(1\.32\) and server \(1\.35\) exceeds the supported minor version skew of \+\/-1/);
  });

  it('kubectl api-resources lists the served kinds with short names', async () => {
    const out = ok(await k(['api-resources']));
    assert.match(out, /^configmaps\s+cm\s+v1\s+true\s+ConfigMap$/m);
    assert.match(out, /^namespaces\s+ns\s+v1\s+false\s+Namespace$/m);
    assert.match(out, /^secrets\s+v1\s+true\s+Secret$/m);
  });

  it('every tenant starts with the system namespaces, so kubectl works without -n', async () => {
    const out = ok(await k(['get', 'ns', '-o', 'name']));
    for (const ns of ['default', 'kube-node-lease', 'kube-public', 'kube-system']) assert.match(out, new RegExp(`^namespace/${ns}$`, 'm'));
    assert.equal(ok(await k(['create', 'configmap', 'in-default', '--from-literal=a=b'])).trim(), 'configmap/in-default created');
    assert.equal(ok(await k(['get', 'cm', 'in-default', '-o', 'jsonpath={.metadata.namespace}'])), 'default');
  });

  it('kubectl create namespace', async () => {
    assert.equal(ok(await k(['create', 'namespace', 'demo'])).trim(), 'namespace/demo created');
  });

  it('kubectl apply: created, then configured, then unchanged', async () => {
    assert.equal(ok(await k(['apply', '-f', '-'], cm('1'))).trim(), 'configmap/web created');
    assert.equal(ok(await k(['apply', '-f', '-'], cm('2'))).trim(), 'configmap/web configured');
    assert.equal(ok(await k(['apply', '-f', '-'], cm('2'))).trim(), 'configmap/web unchanged');
  });

  it('kubectl get prints a Table with NAME, DATA, AGE', async () => {
    const out = ok(await k(['get', 'cm', '-n', 'demo']));
    assert.match(out, /^NAME\s+DATA\s+AGE\n/);
    assert.match(out, /^web\s+1\s+\d+s\n/m);
  });

  it('kubectl get -o yaml, -o json, -o wide, -o jsonpath, -o name', async () => {
    assert.match(ok(await k(['get', 'cm', 'web', '-n', 'demo', '-o', 'yaml'])), /^ {2}key: "2"$/m);
    assert.equal(JSON.parse(ok(await k(['get', 'cm', 'web', '-n', 'demo', '-o', 'json']))).data.key, '2');
    assert.match(ok(await k(['get', 'cm', '-n', 'demo', '-o', 'wide'])), /^web\s+1\s+/m);
    assert.equal(ok(await k(['get', 'cm', 'web', '-n', 'demo', '-o', 'jsonpath={.data.key}'])), '2');
    // Every namespace holds kube-root-ca.crt, as upstream's.
    assert.equal(ok(await k(['get', 'cm', '-n', 'demo', '-o', 'name'])).trim(), `configmap/${ROOT_CA_CONFIGMAP}\nconfigmap/web`);
  });

  it('kubectl get --chunk-size=2 pages through more than five objects', async () => {
    for (let i = 0; i < 6; i++) ok(await k(['create', 'configmap', `chunk-${i}`, '-n', 'demo', '--from-literal=a=b']));
    const out = ok(await k(['get', 'cm', '-n', 'demo', '--chunk-size=2', '-o', 'name']));
    assert.deepEqual(out.trim().split('\n'), [...Array.from({ length: 6 }, (_, i) => `configmap/chunk-${i}`), `configmap/${ROOT_CA_CONFIGMAP}`, 'configmap/web']);
  });

  it('kubectl get -A -l selects by label across namespaces', async () => {
    const out = ok(await k(['get', 'cm', '-A', '-l', 'app=web']));
    assert.match(out, /^NAMESPACE\s+NAME\s+DATA\s+AGE\n/);
    assert.match(out, /^demo\s+web\s+1\s+/m);
    assert.doesNotMatch(out, /chunk-/);
  });

  it('kubectl label and annotate', async () => {
    assert.equal(ok(await k(['label', 'cm', 'web', '-n', 'demo', 'tier=front'])).trim(), 'configmap/web labeled');
    assert.equal(ok(await k(['annotate', 'cm', 'web', '-n', 'demo', 'note=hello'])).trim(), 'configmap/web annotated');
    const obj = JSON.parse(ok(await k(['get', 'cm', 'web', '-n', 'demo', '-o', 'json'])));
    assert.equal(obj.metadata.labels.tier, 'front');
    assert.equal(obj.metadata.annotations.note, 'hello');
  });

  it('kubectl patch with merge, json and strategic patches', async () => {
    ok(await k(['patch', 'cm', 'web', '-n', 'demo', '--type=merge', '-p', '{"data":{"m":"1"}}']));
    ok(await k(['patch', 'cm', 'web', '-n', 'demo', '--type=json', '-p', '[{"op":"add","path":"/data/j","value":"2"}]']));
    ok(await k(['patch', 'cm', 'web', '-n', 'demo', '--type=strategic', '-p', '{"data":{"s":"3"}}']));
    const obj = JSON.parse(ok(await k(['get', 'cm', 'web', '-n', 'demo', '-o', 'json'])));
    assert.deepEqual(obj.data, { key: '2', m: '1', j: '2', s: '3' });
  });

  it('kubectl describe shows the object and the events about it', async () => {
    const uid = JSON.parse(ok(await k(['get', 'cm', 'web', '-n', 'demo', '-o', 'json']))).metadata.uid;
    const event = `apiVersion: v1\nkind: Event\nmetadata:\n  name: web.e2e\n  namespace: demo\ninvolvedObject:\n  kind: ConfigMap\n  name: web\n  namespace: demo\n  uid: ${uid}\nreason: Checked\nmessage: looked at by the e2e test\ntype: Normal\n`;
    ok(await k(['create', '-f', '-'], event));
    const out = ok(await k(['describe', 'cm', 'web', '-n', 'demo']));
    assert.match(out, /^Name:\s+web$/m);
    assert.match(out, /Normal\s+Checked\s+.*looked at by the e2e test/);
    assert.match(ok(await k(['get', 'events', '-n', 'demo'])), /Normal\s+Checked\s+configmap\/web\s+looked at by the e2e test/);
  });

  it('kubectl create secret generic stores base64 data', async () => {
    assert.equal(ok(await k(['create', 'secret', 'generic', 's', '-n', 'demo', '--from-literal=a=b'])).trim(), 'secret/s created');
    const obj = JSON.parse(ok(await k(['get', 'secret', 's', '-n', 'demo', '-o', 'json'])));
    assert.equal(obj.data.a, Buffer.from('b').toString('base64'));
    assert.equal(obj.type, 'Opaque');
    assert.match(ok(await k(['get', 'secrets', '-n', 'demo'])), /^s\s+Opaque\s+1\s+/m);
  });

  it('kubectl explain configmap.data prints the field description', async () => {
    const out = ok(await k(['explain', 'configmap.data']));
    assert.match(out, /FIELD:\s+data <map\[string\]string>/);
    assert.match(out, /Data contains the configuration data/);
  });

  it('kubectl apply of an unknown field fails with the strict decoding error', async () => {
    const bad = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n  namespace: demo\nspec:\n  foo: bar\n`;
    const r = await k(['apply', '-f', '-'], bad);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Error from server \(BadRequest\): error when creating "STDIN": ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "spec"/);
  });

  it('kubectl apply --dry-run=server changes nothing', async () => {
    const out = ok(await k(['apply', '-f', '-', '--dry-run=server'], cm('3')));
    assert.equal(out.trim(), 'configmap/web configured (server dry run)');
    assert.equal(ok(await k(['get', 'cm', 'web', '-n', 'demo', '-o', 'jsonpath={.data.key}'])), '2');
  });

  it('kubectl apply --server-side takes over an object kubectl apply created (server-side apply is served)', async () => {
    assert.equal(ok(await k(['apply', '--server-side', '-f', '-'], cm('4'))).trim(), 'configmap/web serverside-applied');
    assert.equal(ok(await k(['get', 'cm', 'web', '-n', 'demo', '-o', 'jsonpath={.data.key}'])), '4');
  });

  it('kubectl create -f with generateName', async () => {
    const out = ok(await k(['create', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: gen-\n  namespace: demo\n'));
    assert.match(out.trim(), /^configmap\/gen-[a-z0-9]{5} created$/);
  });

  it('kubectl apply of a kind: List manifest under default validation creates every item', async () => {
    const list = [
      'apiVersion: v1',
      'kind: List',
      'items:',
      '- apiVersion: v1',
      '  kind: ConfigMap',
      '  metadata: {name: list-a, namespace: demo}',
      '  data: {k: a}',
      '- apiVersion: v1',
      '  kind: ConfigMap',
      '  metadata: {name: list-b, namespace: demo}',
      '',
    ].join('\n');
    const out = ok(await k(['apply', '-f', '-'], list));
    assert.match(out, /configmap\/list-a created/);
    assert.match(out, /configmap\/list-b created/);
    assert.equal(ok(await k(['get', 'cm', 'list-a', '-n', 'demo', '-o', 'jsonpath={.data.k}'])), 'a');
  });

  it('kubectl apply of a kind the server does not serve says "no matches for kind" under default validation', async () => {
    const r = await k(['apply', '-f', '-'], 'apiVersion: example.com/v1\nkind: Nope\nmetadata:\n  name: x\n  namespace: demo\n');
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /no matches for kind "Nope" in version "example\.com\/v1"/);
    assert.doesNotMatch(r.stderr, /mime|Internal error/);
  });

  it('kubectl get all lists the kinds in the "all" category (configmaps, never secrets)', async () => {
    const out = ok(await k(['get', 'all', '-n', 'demo', '-o', 'name']));
    assert.match(out, /^configmap\/list-a$/m);
    assert.doesNotMatch(out, /^secret\//m);
  });

  it('kubectl delete one, delete --all, then delete the namespace', async () => {
    assert.equal(ok(await k(['delete', 'cm', 'web', '-n', 'demo'])).trim(), 'configmap "web" deleted');
    const all = ok(await k(['delete', 'cm', '--all', '-n', 'demo']));
    assert.match(all, /configmap "chunk-0" deleted/);
    // kube-root-ca.crt went too; the root CA publisher puts it back.
    assert.equal(ok(await k(['get', 'cm', '-n', 'demo', '-o', 'name', `--field-selector=${NOT_ROOT_CA}`])).trim(), '');
    assert.equal(ok(await k(['delete', 'ns', 'demo'])).trim(), 'namespace "demo" deleted');
    const gone = await k(['get', 'ns', 'demo']);
    assert.notEqual(gone.code, 0);
    assert.match(gone.stderr, /namespaces "demo" not found/);
  });
});
