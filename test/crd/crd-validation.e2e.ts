import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { installCrd, widgetCrd } from './crd-fixtures.js';
import { eventually } from '../support/eventually.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const W = '/apis/example.com/v1/namespaces/demo/widgets';

const ruleSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      'x-kubernetes-validations': [
        { rule: 'self.minReplicas <= self.maxReplicas', message: 'minReplicas must not exceed maxReplicas' },
        { rule: 'self.mode != "locked" || self.maxReplicas == 1', messageExpression: "'locked mode allows 1 replica, got %d'.format([self.maxReplicas])" },
        { rule: '!has(self.owner) || self.owner.matches("^[a-z]+@example\\\\.com$")', fieldPath: '.owner', reason: 'FieldValueForbidden', message: 'owner must be an example.com address' },
        { rule: 'self.tags.all(t, t.size() <= 5) && self.tags.exists_one(t, t == "main") ', message: 'exactly one main tag and short tags' },
        { rule: 'quantity(self.memory).compareTo(quantity("1Gi")) <= 0', message: 'memory at most 1Gi' },
        { rule: 'isURL(self.homepage) && url(self.homepage).getScheme() == "https"', message: 'homepage must be https' },
      ],
      properties: {
        minReplicas: { type: 'integer' },
        maxReplicas: { type: 'integer' },
        mode: { type: 'string' },
        owner: { type: 'string' },
        // Bounded as upstream's cost estimate needs them to be (an unbounded list of unbounded strings runs out of budget).
        tags: { type: 'array', maxItems: 16, items: { type: 'string', maxLength: 64 }, default: ['main'] },
        memory: { type: 'string', default: '512Mi' },
        homepage: { type: 'string', default: 'https://example.com' },
        immutableName: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'Value is immutable' }] },
        nested: { type: 'object', properties: { __namespace__x: { type: 'string' }, namespace: { type: 'string' } }, 'x-kubernetes-validations': [{ rule: '!has(self.__namespace__) || self.__namespace__ != "kube-system"', message: 'no kube-system' }] },
        loop: { type: 'array', items: { type: 'integer' } },
      },
    },
  },
};

describe('custom resource validation, pruning and defaulting', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('crd-validation');
    api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'demo' } }).expect(201);
    await installCrd(api, widgetCrd());
    await installCrd(api, widgetCrd({ plural: 'rules', kind: 'Rule', schema: ruleSchema }));
  });
  after(async () => s.close());

  const create = (body: Record<string, unknown>, query = '') => api.post(`${W}${query}`).send({ apiVersion: 'example.com/v1', kind: 'Widget', ...body });

  it('answers 422 with upstream field errors: enum, required, type, min/max, pattern, maxLength', async () => {
    const res = await create({ metadata: { name: 'bad' }, spec: { size: 11, color: 'NonExistentValue', name: 'ABCDEFGHIJ', bars: [{ weight: 1 }] } }).expect(422);
    assert.equal(res.body.reason, 'Invalid');
    assert.match(res.body.message, /^Widget\.example\.com "bad" is invalid: \[/);
    assert.match(res.body.message, /spec\.color: Unsupported value: "NonExistentValue": supported values: "red", "green", "blue"/);
    assert.match(res.body.message, /spec\.bars\[0\]\.name: Required value/);
    assert.match(res.body.message, /spec\.size: Invalid value: 11: spec\.size in body should be less than or equal to 10/);
    assert.match(res.body.message, /spec\.name: Too long: may not be more than 8 bytes/);
    assert.deepEqual(res.body.details.group, 'example.com');
    assert.equal(res.body.details.kind, 'Widget');
    const causes = res.body.details.causes.map((c: { reason: string; field: string }) => `${c.reason} ${c.field}`);
    assert.ok(causes.includes('FieldValueNotSupported spec.color'));
    assert.ok(causes.includes('FieldValueRequired spec.bars[0].name'));
    const typ = await create({ metadata: { name: 'bad' }, spec: { size: 'three' } }).expect(422);
    assert.match(typ.body.message, /spec\.size: Invalid value: "string": spec\.size in body must be of type integer: "string"/);
    const pat = await create({ metadata: { name: 'bad' }, spec: { size: 2, name: 'ab1' } }).expect(422);
    assert.match(pat.body.message, /spec\.name: Invalid value: "ab1": spec\.name in body should match '\^\[a-z\]\+\$'/);
    const req = await create({ metadata: { name: 'bad' }, spec: {} }).expect(422);
    assert.match(req.body.message, /spec\.size: Required value/);
  });

  it('validates list-type set uniqueness and metadata of the CR', async () => {
    const dup = await create({ metadata: { name: 'dup' }, spec: { size: 1, tags: ['a', 'b', 'a'] } }).expect(422);
    assert.match(dup.body.message, /spec\.tags\[2\]: Duplicate value: "a"/);
    const meta = await create({ metadata: { name: 'Bad_Name', labels: { 'a b': 'x' } }, spec: { size: 1 } }).expect(422);
    assert.match(meta.body.message, /metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
    assert.match(meta.body.message, /metadata\.labels: Invalid value: "a b"/);
  });

  it('prunes unknown fields: Strict 400, Warn warnings, Ignore silently (checklist 13, 27)', async () => {
    const strict = await create({ metadata: { name: 'u1', unknownMeta: 'x' }, spec: { size: 1, foo: 'bar' }, unknownField: 1 }, '?fieldValidation=Strict').expect(400);
    assert.match(strict.body.message, /^Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "metadata\.unknownMeta", unknown field "spec\.foo", unknown field "unknownField"$/);
    const warn = await create({ metadata: { name: 'u1' }, spec: { size: 1, foo: 'bar' } }, '?fieldValidation=Warn').expect(201);
    assert.match(String(warn.headers.warning), /unknown field \\?"spec\.foo\\?"/);
    assert.equal(warn.body.spec.foo, undefined);
    const ignore = await create({ metadata: { name: 'u2' }, spec: { size: 1, foo: 'bar' } }, '?fieldValidation=Ignore').expect(201);
    assert.equal(ignore.headers.warning, undefined);
    assert.equal(ignore.body.spec.foo, undefined);
  });

  it('rejects strategic merge patch with 415 and accepts merge and JSON patch (checklist 73)', async () => {
    const smp = await api.patch(`${W}/u1`).set('Content-Type', 'application/strategic-merge-patch+json').send({ spec: { size: 2 } }).expect(415);
    assert.equal(smp.body.message, 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml');
    const mp = await api.patch(`${W}/u1`).set('Content-Type', 'application/merge-patch+json').send({ spec: { size: 2 } }).expect(200);
    assert.equal(mp.body.spec.size, 2);
    assert.equal(mp.body.metadata.generation, 2);
    const jp = await api.patch(`${W}/u1`).set('Content-Type', 'application/json-patch+json').send([{ op: 'replace', path: '/spec/size', value: 12 }]).expect(422);
    assert.match(jp.body.message, /should be less than or equal to 10/);
  });

  it('defaults on create, on update and when reading stored objects (checklist 22)', async () => {
    const created = await create({ metadata: { name: 'd1' }, spec: { size: 1 } }).expect(201);
    assert.equal(created.body.spec.replicas, 1);
    const crd = await api.get(`${CRDS}/widgets.example.com`).expect(200);
    const schema = crd.body.spec.versions[0].schema.openAPIV3Schema;
    schema.properties.spec.properties.color.default = 'blue';
    schema.properties.spec.properties.replicas.default = 7;
    await api.put(`${CRDS}/widgets.example.com`).send(crd.body).expect(200);
    const read = await eventually(async () => {
      const r = await api.get(`${W}/d1`).expect(200);
      return r.body.spec.color === 'blue' ? r.body : false;
    }, { timeoutMs: 5000, message: 'new default visible on read' });
    assert.equal(read.spec.replicas, 1, 'persisted defaults survive a default change');
    const listed = await api.get(W).expect(200);
    assert.ok(listed.body.items.every((i: { spec: { color: string } }) => i.spec.color === 'blue'));
    const fresh = await create({ metadata: { name: 'd2' }, spec: { size: 1 } }).expect(201);
    assert.deepEqual([fresh.body.spec.replicas, fresh.body.spec.color], [7, 'blue']);
  });

  it('ratchets: unchanged values that a stricter schema rejects do not block other updates', async () => {
    await create({ metadata: { name: 'rat' }, spec: { size: 9, name: 'abcdefg' } }).expect(201);
    const crd = await api.get(`${CRDS}/widgets.example.com`).expect(200);
    const spec = crd.body.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    spec.properties.size.maximum = 5;
    spec.properties.name.maxLength = 3;
    await api.put(`${CRDS}/widgets.example.com`).send(crd.body).expect(200);
    await eventually(async () => (await create({ metadata: { name: 'probe-rat' }, spec: { size: 9 } })).status === 422, { timeoutMs: 5000, message: 'stricter schema active' });
    await api.patch(`${W}/rat`).set('Content-Type', 'application/merge-patch+json').send({ metadata: { labels: { touched: 'yes' } } }).expect(200);
    const bad = await api.patch(`${W}/rat`).set('Content-Type', 'application/merge-patch+json').send({ spec: { size: 8 } }).expect(422);
    assert.match(bad.body.message, /spec\.size: Invalid value: 8: spec\.size in body should be less than or equal to 5/);
    assert.doesNotMatch(bad.body.message, /spec\.name/);
    spec.properties.size.maximum = 10;
    spec.properties.name.maxLength = 8;
    const cur = await api.get(`${CRDS}/widgets.example.com`).expect(200);
    cur.body.spec.versions[0].schema.openAPIV3Schema.properties.spec = spec;
    await api.put(`${CRDS}/widgets.example.com`).send(cur.body).expect(200);
    await eventually(async () => (await create({ metadata: { name: 'probe-rat2' }, spec: { size: 9 } })).status === 201, { timeoutMs: 5000, message: 'schema relaxed' });
  });

  it('evaluates x-kubernetes-validations: message, messageExpression, fieldPath + reason, libraries', async () => {
    const R = '/apis/example.com/v1/namespaces/demo/rules';
    const ok = await api.post(R).send({ metadata: { name: 'ok' }, spec: { minReplicas: 1, maxReplicas: 3, mode: 'open', owner: 'ann@example.com' } }).expect(201);
    assert.deepEqual(ok.body.spec.tags, ['main']);
    const bad = await api
      .post(R)
      .send({ metadata: { name: 'bad' }, spec: { minReplicas: 5, maxReplicas: 3, mode: 'locked', owner: 'x@evil.org', tags: ['toolongtag'], memory: '2Gi', homepage: 'http://x' } })
      .expect(422);
    const m = bad.body.message;
    assert.match(m, /spec: Invalid value: "object": minReplicas must not exceed maxReplicas/);
    assert.match(m, /spec: Invalid value: "object": locked mode allows 1 replica, got 3/);
    assert.match(m, /spec\.owner: Forbidden: owner must be an example\.com address/);
    assert.match(m, /spec: Invalid value: "object": exactly one main tag and short tags/);
    assert.match(m, /memory at most 1Gi/);
    assert.match(m, /homepage must be https/);
    const causes = bad.body.details.causes;
    assert.ok(causes.some((c: { reason: string; field: string }) => c.reason === 'FieldValueForbidden' && c.field === 'spec.owner'));
    const ns = await api.post(R).send({ metadata: { name: 'ns' }, spec: { minReplicas: 1, maxReplicas: 1, nested: { namespace: 'kube-system' } } }).expect(422);
    assert.match(ns.body.message, /spec\.nested: Invalid value: "object": no kube-system/);
  });

  it('runs transition rules with oldSelf only on update', async () => {
    const R = '/apis/example.com/v1/namespaces/demo/rules';
    await api.post(R).send({ metadata: { name: 'im' }, spec: { minReplicas: 1, maxReplicas: 1, mode: 'open', immutableName: 'first' } }).expect(201);
    const bad = await api.patch(`${R}/im`).set('Content-Type', 'application/merge-patch+json').send({ spec: { immutableName: 'second' } }).expect(422);
    assert.match(bad.body.message, /spec\.immutableName: Invalid value: "string": Value is immutable/);
    await api.patch(`${R}/im`).set('Content-Type', 'application/merge-patch+json').send({ spec: { maxReplicas: 2 } }).expect(200);
  });

  it('bounds the cost of a rule: refused at CRD creation when its estimate is over budget, and at run time past the per-call limit', async () => {
    const unbounded = widgetCrd({
      plural: 'unboundeds',
      kind: 'Unbounded',
      schema: { type: 'object', properties: { spec: { type: 'object', properties: { l: { type: 'array', items: { type: 'integer' } } }, 'x-kubernetes-validations': [{ rule: 'self.l.all(a, self.l.all(b, self.l.all(c, a + b + c > 0)))' }] } } },
    });
    const refused = await api.post(CRDS).send(unbounded).expect(422);
    assert.match(refused.body.message, /properties\[spec\]\.x-kubernetes-validations\[0\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x \(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared\)/);
    // Within the static budget thanks to maxItems, but a full list still runs past the runtime per-call limit.
    const crd = widgetCrd({
      plural: 'costly',
      kind: 'Costly',
      schema: { type: 'object', properties: { spec: { type: 'object', properties: { l: { type: 'array', maxItems: 1000, items: { type: 'integer' } } }, 'x-kubernetes-validations': [{ rule: 'self.l.all(a, self.l.all(b, a + b > 0))' }] } } },
    });
    await installCrd(api, crd);
    const res = await api.post('/apis/example.com/v1/namespaces/demo/costly').send({ metadata: { name: 'c' }, spec: { l: Array.from({ length: 1000 }, (_, i) => i + 1) } }).expect(422);
    assert.match(res.body.message, /call cost exceeds limit for rule: self\.l\.all/);
    await api.post('/apis/example.com/v1/namespaces/demo/costly').send({ metadata: { name: 'small' }, spec: { l: [1, 2, 3] } }).expect(201);
  });

  it('rejects non-structural schemas and bad rules at CRD creation with upstream messages', async () => {
    const ns = widgetCrd({
      plural: 'nonstructurals',
      kind: 'NonStructural',
      schema: { type: 'object', properties: { spec: { properties: { foo: { type: 'string' } } }, list: { type: 'array' } }, anyOf: [{ properties: { other: { type: 'string' } } }] },
    });
    const r = await api.post(CRDS).send(ns).expect(422);
    assert.match(r.body.message, /spec\.validation\.openAPIV3Schema\.properties\[spec\]\.type: Required value: must not be empty for specified object fields/);
    assert.match(r.body.message, /spec\.validation\.openAPIV3Schema\.properties\[list\]\.items: Required value: must be specified/);
    assert.match(r.body.message, /spec\.validation\.openAPIV3Schema\.anyOf\[0\]\.properties\[other\]\.type: Forbidden: must be empty to be structural/);
    assert.match(r.body.message, /spec\.validation\.openAPIV3Schema\.properties\[other\]: Required value: because it is defined in spec\.validation\.openAPIV3Schema\.anyOf\[0\]\.properties\[other\]/);
    const rule = widgetCrd({ plural: 'badrules', kind: 'BadRule', schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.x +' }], properties: { x: { type: 'integer' } } } } } });
    const r2 = await api.post(CRDS).send(rule).expect(422);
    assert.match(r2.body.message, /spec\.validation\.openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[0\]\.rule: Invalid value: .*compilation failed: ERROR: <input>:1:9: /);
    const def = widgetCrd({ plural: 'baddefaults', kind: 'BadDefault', schema: { type: 'object', properties: { spec: { type: 'object', properties: { n: { type: 'integer', default: 'x' } } } } } });
    const r3 = await api.post(CRDS).send(def).expect(422);
    assert.match(r3.body.message, /spec\.validation\.openAPIV3Schema\.properties\[spec\]\.properties\[n\]\.default: Invalid value: "string":  in body must be of type integer: "string"/);
    const unique = widgetCrd({ plural: 'uniques', kind: 'Unique', schema: { type: 'object', properties: { l: { type: 'array', uniqueItems: true, items: { type: 'string' } } } } });
    const r4 = await api.post(CRDS).send(unique).expect(422);
    assert.match(r4.body.message, /uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic/);
  });

  it('validates embedded resources and preserves unknown fields where the schema says so (checklist 14, 28)', async () => {
    const crd = widgetCrd({
      plural: 'embeds',
      kind: 'Embed',
      schema: {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            properties: {
              template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
              free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              intOrString: { 'x-kubernetes-int-or-string': true },
            },
          },
        },
      },
    });
    await installCrd(api, crd);
    const E = '/apis/example.com/v1/namespaces/demo/embeds';
    const ok = await api
      .post(`${E}?fieldValidation=Strict`)
      .send({ metadata: { name: 'e1' }, spec: { template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { anything: [1] } }, free: { a: { b: 'c' } }, intOrString: 5 } })
      .expect(201);
    assert.deepEqual(ok.body.spec.free, { a: { b: 'c' } });
    assert.deepEqual(ok.body.spec.template.spec, { anything: [1] });
    const strict = await api.post(`${E}?fieldValidation=Strict`).send({ metadata: { name: 'e2' }, spec: { template: { apiVersion: 'v1', kind: 'Pod', metadata: { unknownSubMeta: 1 } } } }).expect(400);
    assert.match(strict.body.message, /unknown field "spec\.template\.metadata\.unknownSubMeta"/);
    const bad = await api.post(E).send({ metadata: { name: 'e3' }, spec: { template: { metadata: { name: 'x' } }, intOrString: true } }).expect(422);
    assert.match(bad.body.message, /spec\.template\.apiVersion: Required value: must not be empty/);
    assert.match(bad.body.message, /spec\.template\.kind: Required value: must not be empty/);
    assert.match(bad.body.message, /spec\.intOrString: Invalid value: "boolean": spec\.intOrString in body must be of type integer,string: "boolean"/);
  });
});
