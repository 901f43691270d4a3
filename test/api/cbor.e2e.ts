import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Decoder } from 'cbor-x';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';

// The client side is built from upstream's rules with an independent library
// (cbor-x), not the server's decoder: byte strings read as strings, as
// upstream's decode mode does (DefaultByteStringType string).
const reader = new Decoder({ mapsAsObjects: false, useRecords: false });

function plain(v: unknown): unknown {
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [Buffer.isBuffer(k) ? k.toString('utf8') : k, plain(x)]));
  if (Array.isArray(v)) return v.map(plain);
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  return v;
}

function readCbor(buf: Buffer): unknown {
  assert.equal(buf.subarray(0, 3).toString('hex'), 'd9d9f7', 'a CBOR answer begins with the self-described tag');
  return plain(reader.decode(buf));
}

/** A minimal CBOR writer for test bodies: text-string keys and values, as a client may send. */
function cbor(v: unknown): Buffer {
  const head = (major: number, n: number): Buffer => {
    if (n < 24) return Buffer.from([(major << 5) | n]);
    if (n < 256) return Buffer.from([(major << 5) | 24, n]);
    if (n < 65536) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
    const b = Buffer.alloc(5);
    b[0] = (major << 5) | 26;
    b.writeUInt32BE(n, 1);
    return b;
  };
  if (v === null) return Buffer.from([0xf6]);
  if (v === true) return Buffer.from([0xf5]);
  if (v === false) return Buffer.from([0xf4]);
  if (typeof v === 'number' && !Number.isInteger(v)) {
    const b = Buffer.alloc(9);
    b[0] = 0xfb;
    b.writeDoubleBE(v, 1);
    return b;
  }
  if (typeof v === 'number') return v >= 0 ? head(0, v) : head(1, -1 - v);
  if (typeof v === 'string') return Buffer.concat([head(3, Buffer.byteLength(v)), Buffer.from(v)]);
  if (Array.isArray(v)) return Buffer.concat([head(4, v.length), ...v.map(cbor)]);
  const entries = Object.entries(v as Record<string, unknown>);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, x]) => [cbor(k), cbor(x)])]);
}

const binary = (res: request.Response, cb: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
};

const SERVER_FIELDS = ['uid', 'resourceVersion', 'creationTimestamp', 'managedFields', 'generation'];

/** An object as a client would send it again: no server-set metadata, no status. */
function resendable(obj: Record<string, unknown>, name: string): Record<string, unknown> {
  const meta: Record<string, unknown> = { ...(obj.metadata as Record<string, unknown>), name };
  for (const f of SERVER_FIELDS) delete meta[f];
  const out: Record<string, unknown> = { ...obj, metadata: meta };
  delete out.status;
  return out;
}

function comparable(obj: Record<string, unknown>): Record<string, unknown> {
  const meta: Record<string, unknown> = { ...(obj.metadata as Record<string, unknown>) };
  for (const f of [...SERVER_FIELDS, 'name', 'selfLink']) delete meta[f];
  const out: Record<string, unknown> = { ...obj, metadata: meta };
  delete out.status;
  return out;
}

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.cbor.example.com' },
  spec: {
    group: 'cbor.example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: { spec: { type: 'object', properties: { size: { type: 'integer' }, ratio: { type: 'number' }, tags: { type: 'array', items: { type: 'string' } }, on: { type: 'boolean' } } } },
          },
        },
      },
    ],
  },
};

/** One object of each built-in kind that needs nothing else to exist, and a custom resource. */
const SAMPLES: { path: string; body: Record<string, unknown> }[] = [
  { path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cbor-ns', labels: { a: 'b' } } } },
  { path: '/api/v1/namespaces/demo/configmaps', body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', annotations: { 'x.io/y': 'z' } }, data: { k: 'v', emoji: 'héllo ✓' } } },
  { path: '/api/v1/namespaces/demo/secrets', body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sec' }, type: 'Opaque', data: { k: 'dmFsdWU=' } } },
  { path: '/api/v1/namespaces/demo/resourcequotas', body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'rq' }, spec: { hard: { configmaps: '10', 'requests.cpu': '2' } } } },
  { path: '/api/v1/namespaces/demo/serviceaccounts', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa' } } },
  {
    path: '/api/v1/namespaces/demo/events',
    body: { apiVersion: 'v1', kind: 'Event', metadata: { name: 'ev' }, involvedObject: { kind: 'ConfigMap', name: 'cm', namespace: 'demo' }, reason: 'Test', message: 'm', type: 'Normal', count: 3, firstTimestamp: '2025-01-02T03:04:05Z' },
  },
  {
    path: '/apis/events.k8s.io/v1/namespaces/demo/events',
    body: { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'ev2' }, eventTime: '2025-01-02T03:04:05.123456Z', reportingController: 'x.io/c', reportingInstance: 'i', action: 'Do', reason: 'R', type: 'Normal', regarding: { kind: 'ConfigMap', name: 'cm', namespace: 'demo' } },
  },
  { path: '/apis/coordination.k8s.io/v1/namespaces/demo/leases', body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' }, spec: { holderIdentity: 'me', leaseDurationSeconds: 15, leaseTransitions: 4_000_000_000 } } },
  { path: '/apis/rbac.authorization.k8s.io/v1/namespaces/demo/roles', body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] } },
  { path: '/apis/rbac.authorization.k8s.io/v1/clusterroles', body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'cbor-cr' }, rules: [{ nonResourceURLs: ['/x'], verbs: ['get'] }] } },
  {
    path: '/apis/rbac.authorization.k8s.io/v1/namespaces/demo/rolebindings',
    body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'rb' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' }, subjects: [{ kind: 'User', name: 'u', apiGroup: 'rbac.authorization.k8s.io' }] },
  },
  {
    path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
    body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'cbor-crb' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cbor-cr' }, subjects: [{ kind: 'Group', name: 'g', apiGroup: 'rbac.authorization.k8s.io' }] },
  },
  {
    path: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies',
    body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: 'cbor-vap' }, spec: { matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] }, validations: [{ expression: 'true' }] } },
  },
  { path: '/apis/cbor.example.com/v1/namespaces/demo/widgets', body: { apiVersion: 'cbor.example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 3, ratio: 0.25, tags: ['a', 'b'], on: true } } },
];

describe('CBOR (KEP-4222) with CBORServingAndStorage', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('cbor', { PLINTH_FEATURE_GATES: 'CBORServingAndStorage=true' });
    api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'demo' } }).expect(201);
    await api.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions').send(CRD).expect(201);
    for (let i = 0; ; i++) {
      const res = await api.get('/apis/cbor.example.com/v1/namespaces/demo/widgets');
      if (res.status === 200) break;
      assert.ok(i < 200, `the custom resource is served (${res.status})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  after(async () => s.close());

  const getCbor = (path: string) => api.get(path).set('Accept', 'application/cbor').buffer(true).parse(binary);

  /** A CBOR read between two equal JSON reads decodes to them (retried while controllers still change the object). */
  async function sameInBoth(path: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const before = (await api.get(path).expect(200)).body;
      const bin = await getCbor(path).expect(200);
      const after = (await api.get(path).expect(200)).body;
      if (JSON.stringify(before) !== JSON.stringify(after)) {
        assert.ok(attempt < 20, `${path} keeps changing`);
        continue;
      }
      assert.deepEqual(readCbor(bin.body), before, `${path}: the CBOR read decodes to the JSON read`);
      return;
    }
  }

  it('creates every sample kind in CBOR with the same result as in JSON, and reads it back the same in both', async () => {
    for (const { path, body } of SAMPLES) {
      const name = (body.metadata as { name: string }).name;
      const viaJson = await api.post(path).send(body);
      assert.equal(viaJson.status, 201, `${path}: ${JSON.stringify(viaJson.body)}`);
      const again = resendable(viaJson.body, `${name}-c`);
      const viaCbor = await api.post(path).set('Content-Type', 'application/cbor').set('Accept', 'application/cbor').send(cbor(again)).buffer(true).parse(binary);
      assert.equal(viaCbor.status, 201, `${path}: ${viaCbor.body.toString('hex').slice(0, 200)}`);
      assert.equal(viaCbor.headers['content-type'], 'application/cbor');
      const createdCbor = readCbor(viaCbor.body) as Record<string, unknown>;
      const readJson = await api.get(`${path}/${name}-c`).expect(200);
      // Controllers (the quota controller's status) may change the object after its create answer.
      assert.deepEqual(comparable(createdCbor), comparable(readJson.body), `${path}: the CBOR answer decodes to the JSON read`);
      assert.deepEqual(comparable(readJson.body), comparable(viaJson.body), `${path}: created from CBOR as from JSON`);
      await sameInBoth(`${path}/${name}-c`);
    }
  });

  it('lists every resource Plinth serves in CBOR as in JSON', async () => {
    const groups = (await api.get('/apis').expect(200)).body.groups as { preferredVersion: { groupVersion: string } }[];
    const gvs = ['v1', ...groups.map((g) => g.preferredVersion.groupVersion)];
    let lists = 0;
    for (const gv of gvs) {
      const base = gv === 'v1' ? '/api/v1' : `/apis/${gv}`;
      const resources = (await api.get(base).expect(200)).body.resources as { name: string; verbs: string[] }[];
      for (const r of resources.filter((x) => !x.name.includes('/') && x.verbs.includes('list'))) {
        // Both read at one revision: controllers may write between two reads.
        const first = await api.get(`${base}/${r.name}`);
        const at = first.status === 200 ? `?resourceVersion=${first.body.metadata.resourceVersion}&resourceVersionMatch=Exact` : '';
        const json = await api.get(`${base}/${r.name}${at}`);
        const bin = await getCbor(`${base}/${r.name}${at}`);
        assert.equal(bin.status, json.status, `${base}/${r.name}`);
        if (json.status !== 200) continue;
        assert.equal(bin.headers['content-type'], 'application/cbor');
        assert.deepEqual(readCbor(bin.body), json.body, `${base}/${r.name}`);
        lists++;
      }
    }
    assert.ok(lists > 15, `lists compared: ${lists}`);
  });

  it('answers Table requests in CBOR', async () => {
    const res = await api.get('/api/v1/namespaces/demo/configmaps').set('Accept', 'application/cbor;as=Table;v=v1;g=meta.k8s.io').buffer(true).parse(binary).expect(200);
    assert.equal(res.headers['content-type'], 'application/cbor;as=Table;v=v1;g=meta.k8s.io');
    assert.equal((readCbor(res.body) as { kind: string }).kind, 'Table');
  });

  it('negotiates by q-values and answers 406 listing application/cbor', async () => {
    const preferJson = await api.get('/api/v1/namespaces/demo/configmaps/cm').set('Accept', 'application/cbor;q=0.5, application/json').expect(200);
    assert.equal(preferJson.headers['content-type'], 'application/json');
    const preferCbor = await getCbor('/api/v1/namespaces/demo/configmaps/cm').set('Accept', 'application/json;q=0.4, application/cbor;q=0.9').expect(200);
    assert.equal(preferCbor.headers['content-type'], 'application/cbor');
    const refused = await api.get('/api/v1/namespaces/demo/configmaps/cm').set('Accept', 'application/xml').expect(406);
    assert.equal(refused.body.message, 'only the following media types are accepted: application/json, application/yaml, application/cbor');
  });

  it('answers /version in indented JSON whatever is accepted, as upstream', async () => {
    for (const accept of ['application/cbor', 'application/yaml', 'application/json']) {
      const res = await api.get('/version').set('Accept', accept).buffer(true).parse(binary).expect(200);
      assert.equal(res.headers['content-type'], 'application/json', accept);
      const text = res.body.toString('utf8');
      assert.match(text, /^\{\n  "major": "1",\n/, accept);
      assert.equal(JSON.parse(text).minor, '35');
    }
  });

  it('takes reviews in CBOR (SelfSubjectAccessReview, SelfSubjectReview, TokenReview) and answers them in CBOR', async () => {
    const post = (path: string, body: unknown) =>
      api.post(path).set('Content-Type', 'application/cbor').set('Accept', 'application/cbor').buffer(true).parse(binary).send(cbor(body));
    const access = await post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { verb: 'list', resource: 'configmaps', namespace: 'demo' } },
    }).expect(201);
    assert.equal(access.headers['content-type'], 'application/cbor');
    assert.equal((readCbor(access.body) as { status: { allowed: boolean } }).status.allowed, true);
    const self = await post('/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }).expect(201);
    assert.ok((readCbor(self.body) as { status: { userInfo: { username: string } } }).status.userInfo.username);
    const token = await post('/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'not-a-token' } }).expect(201);
    assert.equal((readCbor(token.body) as { status: { authenticated?: boolean } }).status.authenticated ?? false, false);
  });

  it('answers errors as a CBOR Status when CBOR is accepted', async () => {
    const res = await getCbor('/api/v1/namespaces/demo/configmaps/missing').expect(404);
    assert.equal(res.headers['content-type'], 'application/cbor');
    const status = readCbor(res.body) as { kind: string; reason: string; code: number };
    assert.deepEqual([status.kind, status.reason, status.code], ['Status', 'NotFound', 404]);
  });

  it('applies a CBOR configuration (application/apply-patch+cbor)', async () => {
    const cfg = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, data: { a: '1' } };
    const res = await api.patch('/api/v1/namespaces/demo/configmaps/applied?fieldManager=cbor-test').set('Content-Type', 'application/apply-patch+cbor').send(cbor(cfg)).expect(201);
    assert.deepEqual(res.body.data, { a: '1' });
  });

  it('refuses a duplicate map key, a non-string key, a bignum tag, and bodies past the limits with upstream 400s', async () => {
    const post = (body: Buffer) => api.post('/api/v1/namespaces/demo/configmaps').set('Content-Type', 'application/cbor').send(body);
    // {"metadata": {"name": "d", "name": "e"}}: nested, found after apiVersion/kind are read.
    const nested = Buffer.concat([Buffer.from([0xa1]), cbor('metadata'), Buffer.from([0xa2]), cbor('name'), cbor('d'), cbor('name'), cbor('e')]);
    let res = await post(nested).expect(400);
    assert.equal(res.body.reason, 'BadRequest');
    assert.equal(res.body.message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: found duplicate map key "name" at map element index 1');
    const top = Buffer.concat([Buffer.from([0xa2]), cbor('kind'), cbor('ConfigMap'), cbor('kind'), cbor('ConfigMap')]);
    res = await post(top).expect(400);
    assert.equal(res.body.message, `the object provided is unrecognized (must be of type ConfigMap): unable to determine group/version/kind: cbor: found duplicate map key "kind" at map element index 1 (${top.subarray(0, 30).toString('hex')} ...)`);
    const intKey = Buffer.concat([Buffer.from([0xa1]), cbor('data'), Buffer.from([0xa1, 0x01]), cbor('x')]);
    res = await post(intKey).expect(400);
    assert.equal(res.body.message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: cannot unmarshal positive integer into Go value of type string');
    const bignum = Buffer.concat([Buffer.from([0xa1]), cbor('data'), Buffer.from([0xc2, 0x41, 0x01])]);
    res = await post(bignum).expect(400);
    assert.match(res.body.message, /unable to determine group\/version\/kind: cbor: data item of cbor type tag is not accepted by protocol: bignum/);
    const deep = Buffer.concat([Buffer.from([0xa1]), cbor('data'), Buffer.alloc(70, 0x81), Buffer.from([0x00])]);
    res = await post(deep).expect(400);
    assert.match(res.body.message, /cbor: exceeded max nested level 64/);
    const wide = Buffer.concat([Buffer.from([0xa1]), cbor('x'), Buffer.from([0x99, 0x04, 0x01]), Buffer.alloc(1025, 0x00)]);
    res = await post(wide).expect(400);
    assert.match(res.body.message, /cbor: exceeded max number of elements 1024 for CBOR array/);
    const huge = Buffer.concat([Buffer.from([0xa1]), cbor('x'), Buffer.from([0x5a, 0x00, 0x40, 0x00, 0x00]), Buffer.alloc(4 * 1024 * 1024)]);
    res = await post(huge);
    assert.equal(res.status, 413);
  });

  it('refuses an unsupported Content-Type with 415 naming application/cbor, and reports unknown fields as upstream', async () => {
    const res = await api.post('/api/v1/namespaces/demo/configmaps').set('Content-Type', 'application/msgpack').send(Buffer.from([0x80])).expect(415);
    assert.equal(res.body.reason, 'UnsupportedMediaType');
    assert.equal(res.body.message, 'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor');
    const patch = await api.patch('/api/v1/namespaces/demo/configmaps/cm').set('Content-Type', 'application/cbor').send(cbor({})).expect(415);
    assert.match(patch.body.message, /application\/apply-patch\+yaml, application\/apply-patch\+cbor$/);
    const unknown = cbor({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'u' }, bogus: 1 });
    const strict = await api.post('/api/v1/namespaces/demo/configmaps?fieldValidation=Strict').set('Content-Type', 'application/cbor').send(unknown).expect(400);
    assert.equal(strict.body.message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: cbor: found unknown field at map element index 3');
    const warn = await api.post('/api/v1/namespaces/demo/configmaps?fieldValidation=Warn').set('Content-Type', 'application/cbor').send(unknown).expect(201);
    assert.match(String(warn.headers.warning), /cbor: found unknown field at map element index 3/);
  });

  it('streams a watch as application/cbor-seq with the same events as a JSON watch', async () => {
    const rv = (await api.get('/api/v1/namespaces/demo/configmaps').expect(200)).body.metadata.resourceVersion as string;
    const path = `${s.url}/api/v1/namespaces/demo/configmaps?watch=1&resourceVersion=${rv}`;
    const jsonWatch = await fetch(path, { headers: { Accept: 'application/json' } });
    const cborWatch = await fetch(path, { headers: { Accept: 'application/cbor' } });
    assert.equal(cborWatch.headers.get('content-type'), 'application/cbor-seq');
    await api.post('/api/v1/namespaces/demo/configmaps').send({ metadata: { name: 'w1' }, data: { a: '1' } }).expect(201);
    await api.patch('/api/v1/namespaces/demo/configmaps/w1').set('Content-Type', 'application/merge-patch+json').send({ data: { a: '2' } }).expect(200);
    await api.delete('/api/v1/namespaces/demo/configmaps/w1').expect(200);
    const jsonEvents = await readEvents(jsonWatch, 3, (buf) => buf.toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)));
    const cborEvents = await readEvents(cborWatch, 3, (buf) => {
      const items: unknown[] = [];
      reader.decodeMultiple(buf, (item: unknown) => {
        items.push(plain(item));
      });
      return items;
    });
    assert.deepEqual(cborEvents.map((e) => (e as { type: string }).type), ['ADDED', 'MODIFIED', 'DELETED']);
    assert.deepEqual(cborEvents, jsonEvents);
  });
});

/** Reads a streamed body until `parse` yields `n` items (a partial last item makes parse throw: read on). */
async function readEvents(res: Response, n: number, parse: (buf: Buffer) => unknown[]): Promise<unknown[]> {
  const bodyReader = (res.body as ReadableStream<Uint8Array>).getReader();
  let buf = Buffer.alloc(0);
  for (;;) {
    try {
      const items = parse(buf);
      if (items.length >= n) {
        await bodyReader.cancel();
        return items.slice(0, n);
      }
    } catch {
      // an item cut in the middle: wait for the rest
    }
    const { value, done } = await bodyReader.read();
    assert.ok(!done, 'the watch ended early');
    buf = Buffer.concat([buf, Buffer.from(value)]);
  }
}
