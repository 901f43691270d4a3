import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { CelRuleWorkers } from '../../apps/api/src/cel-workers/cel-rule-workers.service.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { installCrd, widgetCrd } from './crd-fixtures.js';
import { eventually } from '../support/eventually.js';

const COSTLY_RULE = 'self.l.all(a, self.l.all(b, a + b > 0))';
const LIST = Array.from({ length: 1000 }, (_, i) => i + 1);

function costlyCrd(): Record<string, unknown> {
  const spec = { type: 'object', properties: { l: { type: 'array', maxItems: 1000, items: { type: 'integer' } } }, 'x-kubernetes-validations': [{ rule: COSTLY_RULE }] };
  return widgetCrd({ plural: 'costlies', kind: 'Costly', schema: { type: 'object', properties: { spec } } });
}

/** A rule cheap in practice but not trivially bounded (a regex over a long string): it runs on a worker. */
function namesCrd(): Record<string, unknown> {
  const spec = { type: 'object', properties: { name: { type: 'string', maxLength: 100_000 } }, 'x-kubernetes-validations': [{ rule: "self.name.matches('^[a-z]+$')", message: 'lower-case letters only' }] };
  return widgetCrd({ plural: 'names', kind: 'Name', schema: { type: 'object', properties: { spec } } });
}

/** A trivial rule (estimated cost a few units): it runs inline. */
function trivialCrd(): Record<string, unknown> {
  const spec = { type: 'object', properties: { n: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.n < 10', message: 'n must be below 10' }] };
  return widgetCrd({ plural: 'trivials', kind: 'Trivial', schema: { type: 'object', properties: { spec } } });
}

// CRD validation rules run on the CEL worker pool: the event loop never runs them, a tenant gets at most a share of the workers.
describe('custom resources: CEL rules on worker threads', () => {
  let s: TestServer;
  let hostile: ReturnType<typeof request>;
  let quiet: ReturnType<typeof request>;
  let workers: CelRuleWorkers;

  before(async () => {
    s = await startTestServer('crd-cel-workers', { PLINTH_TENANTS: 'hostile,quiet', PLINTH_CEL_WORKERS: '2', PLINTH_CRD_POLL_INTERVAL_MS: '100' });
    hostile = request(`${s.url}/clusters/hostile`);
    quiet = request(`${s.url}/clusters/quiet`);
    workers = s.app.get(CelRuleWorkers);
    for (const api of [hostile, quiet]) {
      await api.post('/api/v1/namespaces').send({ metadata: { name: 'demo' } }).expect(201);
    }
    await installCrd(hostile, costlyCrd());
    await installCrd(quiet, namesCrd());
    await installCrd(quiet, trivialCrd());
  });
  after(async () => s?.close());

  it('answers a rule that runs into the cost limit on a worker with upstream\'s 422', async () => {
    const done = workers.stats().completed;
    const res = await hostile.post('/apis/example.com/v1/namespaces/demo/costlies').send({ metadata: { name: 'c' }, spec: { l: LIST } }).expect(422);
    assert.equal(res.body.reason, 'Invalid');
    assert.match(
      res.body.message,
      /^Costly\.example\.com "c" is invalid: spec: Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self\.l\.all\(a, self\.l\.all\(b, a \+ b > 0\)\)$/,
    );
    assert.ok(workers.stats().completed > done, 'the rule ran on a worker');
    // An object within the limit, and another tenant's rule with its message, on a worker too.
    const small = await hostile.post('/apis/example.com/v1/namespaces/demo/costlies').send({ metadata: { name: 'small' }, spec: { l: [1, 2, 3] } });
    assert.equal(small.status, 201, small.text);
    const beforeName = workers.stats().completed;
    const bad = await quiet.post('/apis/example.com/v1/namespaces/demo/names').send({ metadata: { name: 'upper' }, spec: { name: 'ABC' } }).expect(422);
    assert.match(bad.body.message, /spec: Invalid value: "object": lower-case letters only/);
    assert.ok(workers.stats().completed > beforeName);
  });

  it('evaluates trivial rules inline, with the same answers', async () => {
    const done = workers.stats().completed;
    const bad = await quiet.post('/apis/example.com/v1/namespaces/demo/trivials').send({ metadata: { name: 'big' }, spec: { n: 12 } }).expect(422);
    assert.match(bad.body.message, /^Trivial\.example\.com "big" is invalid: spec: Invalid value: "object": n must be below 10$/);
    await quiet.post('/apis/example.com/v1/namespaces/demo/trivials').send({ metadata: { name: 'small' }, spec: { n: 1 } }).expect(201);
    assert.equal(workers.stats().completed, done, 'no worker was asked');
  });

  it('serves other tenants (health, reads, their own rules) while one tenant has many cost-limit writes pending', async () => {
    // Both workers up, so that what follows is about sharing them.
    await Promise.all([
      hostile.post('/apis/example.com/v1/namespaces/demo/costlies').send({ metadata: { generateName: 'w-' }, spec: { l: [1] } }),
      quiet.post('/apis/example.com/v1/namespaces/demo/names').send({ metadata: { generateName: 'w-' }, spec: { name: 'warm' } }),
    ]);
    const N = 12;
    let hostileDone = 0;
    const flood = Array.from({ length: N }, (_, i) =>
      hostile
        .post('/apis/example.com/v1/namespaces/demo/costlies')
        .send({ metadata: { name: `flood-${i}` }, spec: { l: LIST } })
        .then((r) => {
          hostileDone++;
          return r;
        }),
    );
    // Wait until the flood holds a worker, then ask for the rest.
    await eventually(() => workers.stats().busy > 0, { timeoutMs: 30_000, message: 'a worker busy with the flood' });
    const pendingAt: Record<string, number> = {};
    const seen = (what: string) => (r: request.Response) => {
      pendingAt[what] = N - hostileDone;
      return r;
    };
    const [health, read, ownRule] = await Promise.all([
      request(s.url).get('/healthz').then(seen('healthz')),
      quiet.get('/api/v1/namespaces/demo').then(seen('read')),
      quiet.post('/apis/example.com/v1/namespaces/demo/names').send({ metadata: { name: 'fine' }, spec: { name: 'fine' } }).then(seen('ownRule')),
    ]);
    assert.equal(health.status, 200);
    assert.equal(read.status, 200);
    assert.equal(ownRule.status, 201, ownRule.text);
    for (const [what, pending] of Object.entries(pendingAt)) assert.ok(pending > 0, `${what} was answered only after every hostile write (${JSON.stringify(pendingAt)})`);
    const results = await Promise.all(flood);
    for (const r of results) {
      // Each is refused by its rule, or throttled when the tenant's share or queue is spent: never a 5xx.
      assert.ok(r.status === 422 || r.status === 429, `${r.status} ${r.text}`);
      if (r.status === 422) assert.match(r.body.message, /call cost exceeds limit for rule: self\.l\.all/);
      else assert.match(r.headers['retry-after'], /^[1-9]\d*$/);
    }
  });
});
