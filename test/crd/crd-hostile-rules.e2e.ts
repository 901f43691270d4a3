import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { installCrd, widgetCrd } from './crd-fixtures.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const CATASTROPHIC = '^(\\pL+)+$';

function specSchema(properties: Record<string, unknown>, rules?: unknown[]): Record<string, unknown> {
  return { type: 'object', properties: { spec: { type: 'object', properties, ...(rules ? { 'x-kubernetes-validations': rules } : {}) } } };
}

// Patterns and rules a hostile tenant can submit: answered at once, or refused when the CRD is created.
describe('custom resources: hostile patterns and rules', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    // A small validation share (10 ms/s, 50 ms burst) so that the fairness test reaches it quickly.
    // The throttling test runs in tenant `heavy`, whose share the other tests have not spent.
    s = await startTestServer('crd-hostile', { PLINTH_CRD_POLL_INTERVAL_MS: '100', PLINTH_TENANT_VALIDATION_MS_PER_SECOND: '10', PLINTH_TENANTS: 'heavy' });
    api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'demo' } }).expect(201);
    await api.post('/clusters/heavy/api/v1/namespaces').send({ metadata: { name: 'demo' } }).expect(201);
  });

  /**
   * A create that is not about throttling: on a loaded machine one expensive validation can spend the small share
   * the throttling test needs, so a 429 is waited out (its Retry-After) rather than taken for the answer.
   */
  async function createAfterAnyThrottle(path: string, body: Record<string, unknown>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const res = await api.post(path).send(body);
      if (res.status !== 429 || attempt === 10) {
        assert.equal(res.status, 201, res.text);
        return;
      }
      await new Promise((r) => setTimeout(r, Number(res.headers['retry-after'] ?? 1) * 1000));
    }
  }
  after(async () => s?.close());

  it('answers a catastrophic-backtracking schema pattern at once, while other requests keep being served', async () => {
    await installCrd(api, widgetCrd({ plural: 'patterns', kind: 'Pattern', schema: specSchema({ name: { type: 'string', pattern: CATASTROPHIC } }) }));
    const path = '/apis/example.com/v1/namespaces/demo/patterns';
    // 29 letters then a digit blocked a backtracking engine for 8.7 s; 5,000 letters would never finish.
    const hostile = [`${'a'.repeat(29)}1`, `${'é'.repeat(5000)}!`].map((name, i) => api.post(path).send({ metadata: { name: `p${i}` }, spec: { name } }));
    const health = api.get('/healthz');
    const [bad1, bad2, ok] = await Promise.all([...hostile, health]);
    for (const res of [bad1, bad2]) {
      assert.equal(res.status, 422, res.text);
      assert.match(res.body.message, /spec\.name in body should match '\^\(\\pL\+\)\+\$'/);
    }
    assert.equal(ok.status, 200);
    await createAfterAnyThrottle(path, { metadata: { name: 'good' }, spec: { name: 'héllo' } });
  });

  it('answers a catastrophic pattern in CEL matches() at once', async () => {
    const rules = [{ rule: `self.name.matches('${CATASTROPHIC.replace(/\\/g, '\\\\')}')`, message: 'letters only' }];
    await installCrd(api, widgetCrd({ plural: 'celpatterns', kind: 'CelPattern', schema: specSchema({ name: { type: 'string', maxLength: 10000 } }, rules) }));
    const path = '/apis/example.com/v1/namespaces/demo/celpatterns';
    const res = await api.post(path).send({ metadata: { name: 'c' }, spec: { name: `${'a'.repeat(9000)}1` } }).expect(422);
    assert.match(res.body.message, /spec: Invalid value: "object": letters only/);
    await createAfterAnyThrottle(path, { metadata: { name: 'ok' }, spec: { name: 'abc' } });
  });

  it('refuses at creation a rule whose estimated cost is over the per-rule budget (nested quantifiers over unbounded lists)', async () => {
    const crd = widgetCrd({ plural: 'nesteds', kind: 'Nested', schema: specSchema({ l: { type: 'array', items: { type: 'string' } } }, [{ rule: 'self.l.all(a, self.l.exists(b, a == b))' }]) });
    const res = await api.post(CRDS).send(crd).expect(422);
    assert.equal(res.body.reason, 'Invalid');
    const field = 'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule';
    const cause = res.body.details.causes.find((c: { field: string; message: string }) => c.field === field && /estimated rule cost/.test(c.message));
    assert.ok(cause, res.text);
    assert.equal(cause.reason, 'FieldValueForbidden');
    assert.match(cause.message, /^Forbidden: estimated rule cost exceeds budget by factor of more than 100x \(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared\)$/);
    // The same rule is accepted once the list and its strings are bounded.
    const bounded = widgetCrd({ plural: 'nesteds', kind: 'Nested', schema: specSchema({ l: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 64 } } }, [{ rule: 'self.l.all(a, self.l.exists(b, a == b))' }]) });
    await api.post(CRDS).send(bounded).expect(201);
  });

  it('throttles a tenant that keeps submitting objects its rules take long to validate: 429 with Retry-After', async () => {
    const rules = [{ rule: 'self.l.all(a, self.l.all(b, a + b > 0))' }];
    await installCrd(api, widgetCrd({ plural: 'heavies', kind: 'Heavy', schema: specSchema({ l: { type: 'array', maxItems: 1000, items: { type: 'integer' } } }, rules) }), '/clusters/heavy');
    const path = '/clusters/heavy/apis/example.com/v1/namespaces/demo/heavies';
    const l = Array.from({ length: 1000 }, (_, i) => i + 1);
    const codes: number[] = [];
    let throttled: request.Response | undefined;
    for (let i = 0; i < 20 && !throttled; i++) {
      const res = await api.post(path).send({ metadata: { name: `h${i}` }, spec: { l } });
      codes.push(res.status);
      if (res.status === 429) throttled = res;
    }
    assert.ok(throttled, `never throttled: ${codes.join(',')}`);
    assert.equal(codes[0], 422, 'the first write is validated (and runs into the cost limit)');
    assert.equal(throttled.body.reason, 'TooManyRequests');
    assert.match(throttled.headers['retry-after'], /^[1-9]\d*$/);
    assert.match(throttled.body.message, /used its share of validation time/);
    await api.get('/healthz').expect(200);
  });

  it('refuses at creation rules that together exceed the per-CRD budget, naming the four costliest', async () => {
    // Each rule runs for up to 10,000 strings of up to 4,000 bytes: 803 units each time, 8,030,000 in all, within
    // the per-rule budget of 10,000,000; thirteen of them are 104,390,000, over the CRD's 100,000,000.
    const list = { type: 'array', maxItems: 10000, items: { type: 'string', maxLength: 1000, 'x-kubernetes-validations': [{ rule: "self.matches('^[a-z]+$')" }] } };
    const properties = Object.fromEntries(Array.from({ length: 13 }, (_, i) => [`l${i}`, list]));
    const res = await api.post(CRDS).send(widgetCrd({ plural: 'totals', kind: 'Total', schema: specSchema(properties) })).expect(422);
    const causes = res.body.details.causes as Array<{ field: string; message: string }>;
    assert.ok(
      causes.some((c) => c.field === 'spec.validation.openAPIV3Schema' && /^Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1\.043900x/.test(c.message)),
      res.text,
    );
    const contributors = causes.filter((c) => c.message === 'Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema');
    assert.equal(contributors.length, 4, res.text);
    assert.ok(contributors.every((c) => /^spec\.validation\.openAPIV3Schema\.properties\[spec\]\.properties\[l\d+\]\.items\.x-kubernetes-validations\[0\]\.rule$/.test(c.field)), res.text);
    assert.ok(!causes.some((c) => /estimated rule cost exceeds/.test(c.message)), 'each rule alone is within its own budget');
  });

  it('refuses matches() on an unbounded string in every item of an unbounded list, as upstream does', async () => {
    // 629,148 units per run, times the 1,048,576 items a 3 MiB request can hold.
    const items = { type: 'object', properties: { s: { type: 'string' } }, 'x-kubernetes-validations': [{ rule: 'self.s.matches("^(a+)+$")' }] };
    const res = await api.post(CRDS).send(widgetCrd({ plural: 'regexes', kind: 'Regex', schema: specSchema({ l: { type: 'array', items } }) })).expect(422);
    const field = 'spec.validation.openAPIV3Schema.properties[spec].properties[l].items.x-kubernetes-validations[0].rule';
    const causes = res.body.details.causes as Array<{ field: string; message: string }>;
    assert.ok(
      causes.some((c) => c.field === field && c.message === 'Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)'),
      res.text,
    );
    // Bounded, the same rule is within budget: 64 items of at most 256 characters.
    const bounded = { ...items, properties: { s: { type: 'string', maxLength: 64 } } };
    await api.post(CRDS).send(widgetCrd({ plural: 'regexes', kind: 'Regex', schema: specSchema({ l: { type: 'array', maxItems: 64, items: bounded } }) })).expect(201);
  });
});
