import assert from 'node:assert/strict';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { TenantValidationBudget } from '../../apps/api/src/admission/validation-budget.js';
import { ThrottledWrites } from '../../apps/api/src/flowcontrol/throttled-writes.js';
import { installCrd, widgetCrd } from '../crd/crd-fixtures.js';
import { certificateIdentity, type ClientIdentity, httpsAgent, requestAs } from '../support/credentials.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const heavies = (tenant: string) => `/clusters/${tenant}/apis/example.com/v1/namespaces/default/heavies`;

/** A write sent on its own connection, which the test can abandon (as a client that gives up). */
interface PendingWrite {
  answer: Promise<{ status: number; body: string }>;
  settled: () => boolean;
  abandon: () => void;
}

function send(url: string, id: ClientIdentity, path: string, body: unknown): PendingWrite {
  let settled = false;
  let req!: ReturnType<typeof https.request>;
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req = https.request(`${url}${path}`, { method: 'POST', agent: httpsAgent(id), headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  }).finally(() => (settled = true));
  return { answer, settled: () => settled, abandon: () => req.destroy() };
}

// A tenant whose share of validation time is used up has its next writes to that resource held before their body is
// read, until the share refills, instead of having each read, parsed and taken to validation only to be refused.
describe('flow control: writes held before their body while the tenant\'s validation share is used up', () => {
  let s: TestServer;
  let hank: ClientIdentity;
  let sam: ClientIdentity;
  let throttled: ThrottledWrites;
  let budget: TenantValidationBudget;
  const schema = {
    type: 'object',
    properties: { spec: { type: 'object', properties: { l: { type: 'array', maxItems: 1000, items: { type: 'integer' } } }, 'x-kubernetes-validations': [{ rule: 'self.l.all(a, self.l.all(b, a + b > 0))' }] } },
  };

  before(async () => {
    s = await startTestServer('validation-share-admission', {
      PLINTH_CRD_POLL_INTERVAL_MS: '100',
      PLINTH_TENANT_VALIDATION_MS_PER_SECOND: '10',
      PLINTH_TENANT_QUEUE_LENGTH: '1',
      PLINTH_TENANT_QUEUE_WAIT_MS: '60000',
    });
    throttled = s.app.get(ThrottledWrites);
    budget = s.app.get(TenantValidationBudget);
    hank = await certificateIdentity('hank');
    sam = await certificateIdentity('sam');
    for (const [name, owner] of [['heavy', 'hank'], ['slow', 'sam']]) {
      await request(s.url)
        .post(TENANTS)
        .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec: { owners: [{ kind: 'User', name: owner }] } })
        .expect(201);
      await installCrd(request(s.url), widgetCrd({ plural: 'heavies', kind: 'Heavy', schema }), `/clusters/${name}`);
    }
  });
  after(async () => s?.close());

  it('holds the next write (no seat, body unread), answers 429 at once when the hold is full, serves reads and other tenants meanwhile, and frees the place of a client that leaves', async () => {
    const as = requestAs(s.url, hank);
    const l = Array.from({ length: 1000 }, (_, i) => i + 1);
    // Writes whose rule runs into the cost limit, eight at a time, until the share is used up (well below zero:
    // all eight pass the check before any is charged).
    let refused: request.Response | undefined;
    for (let round = 0; round < 20 && !refused; round++) {
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => as.post(heavies('heavy')).send({ metadata: { name: `h-${round}-${i}` }, spec: { l } })));
      for (const r of answers) assert.ok(r.status === 422 || r.status === 429, `${r.status} ${r.text}`);
      refused = answers.find((r) => r.status === 429);
    }
    assert.ok(refused, 'the validation share was never used up');
    assert.match(refused.body.message, /used its share of validation time/);
    // Keep the share used up for the rest of the test, whatever the machine's speed (10 ms/s: 1,000 s).
    budget.charge('heavy', 10_000);

    // The next write to the resource is held: it takes no seat and its body is not read.
    const held = send(s.url, hank, heavies('heavy'), { metadata: { name: 'held' }, spec: { l: [1] } });
    await eventually(() => throttled.heldOf('heavy') === 1, { timeoutMs: 30_000, intervalMs: 10, message: 'the write is held' });

    // The hold is full (queue length 1): the next is refused at once, its malformed body never looked at (it would be a 400).
    const full = await as.post(heavies('heavy')).set('content-type', 'application/json').send('{"metadata": {"name": ');
    assert.equal(full.status, 429, full.text);
    assert.equal(full.body.reason, 'TooManyRequests');
    assert.match(full.body.message, /used its share of validation time/);
    assert.ok(Number(full.headers['retry-after']) >= 1, full.headers['retry-after']);
    const metrics = (await request(s.url).get('/metrics').expect(200)).text;
    assert.match(metrics, /^plinth_flowcontrol_rejected_requests_total\{tenant="heavy",reason="validation-share"\} [1-9]/m);
    assert.match(metrics, /^plinth_flowcontrol_current_held_writes\{tenant="heavy"\} 1$/m);

    // Reads of it, writes of the tenant's other resources and other tenants' writes are served while it is held.
    await as.get(heavies('heavy')).expect(200);
    await as.post('/clusters/heavy/api/v1/namespaces/default/configmaps').send({ metadata: { name: 'still-served' } }).expect(201);
    await requestAs(s.url, sam).post(heavies('slow')).send({ metadata: { name: 'other-tenant' }, spec: { l: [1] } }).expect(201);
    assert.equal(held.settled(), false, 'the held write was answered');
    assert.equal(throttled.heldOf('heavy'), 1);

    // Its client leaves: the place is free, so the next write is held rather than refused.
    held.abandon();
    await held.answer.catch(() => undefined);
    await eventually(() => throttled.heldOf('heavy') === 0, { timeoutMs: 30_000, intervalMs: 10, message: 'the abandoned write leaves the hold' });
    const next = send(s.url, hank, heavies('heavy'), { metadata: { name: 'next' }, spec: { l: [1] } });
    await eventually(() => throttled.heldOf('heavy') === 1, { timeoutMs: 30_000, intervalMs: 10, message: 'the next write is held' });
    next.abandon();
    await next.answer.catch(() => undefined);
    await eventually(() => throttled.heldOf('heavy') === 0, { timeoutMs: 30_000, intervalMs: 10, message: 'the hold is empty' });
  });

  it('lets a held write through once the share has refilled, and it is stored (not lost)', async () => {
    const as = requestAs(s.url, sam);
    // The tenant's share is used up: a write is refused after validation, which marks the resource.
    budget.charge('slow', 10_000);
    const refused = await as.post(heavies('slow')).send({ metadata: { name: 'refused' }, spec: { l: [1] } });
    assert.equal(refused.status, 429, refused.text);
    const held = send(s.url, sam, heavies('slow'), { metadata: { name: 'kept' }, spec: { l: [1, 2] } });
    await eventually(() => throttled.heldOf('slow') === 1, { timeoutMs: 30_000, intervalMs: 10, message: 'the write is held' });
    assert.equal(held.settled(), false);
    // The share refills (credited here rather than waited for: 10 ms/s would take 1,000 s).
    budget.charge('slow', -budget.msUntilAvailable('slow'));
    const answer = await held.answer;
    assert.equal(answer.status, 201, answer.body);
    const stored = await as.get(`${heavies('slow')}/kept`).expect(200);
    assert.deepEqual(stored.body.spec, { l: [1, 2] });
  });
});
