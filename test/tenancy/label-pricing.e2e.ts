import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { certificateIdentity, type ClientIdentity, requestAs } from '../support/credentials.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const LABELS = 20_000;

/** The seats of work `tenant` was charged so far (plinth_flowcontrol_work_seats_total), 0 before its first request. */
async function charged(url: string, tenant: string): Promise<number> {
  const metrics = (await request(url).get('/metrics').expect(200)).text;
  const line = metrics.split('\n').find((l) => l.startsWith(`plinth_flowcontrol_work_seats_total{tenant="${tenant}"}`));
  return Number(line?.split(' ').at(-1) ?? 0);
}

function labelled(name: string, n: number): object {
  const labels: Record<string, string> = {};
  for (let i = 0; i < n; i++) labels[`label-${i}`] = `v${i % 100}`;
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels } };
}

// Issue 46: a ConfigMap of many labels is cheap to send and costly to store (every label is three GIN index entries);
// flow control charges its tenant for the entries, as it charges bytes, so its virtual time runs ahead of a tenant
// of plain writes.
describe('writes priced by the label index entries they store', { timeout: 180_000 }, () => {
  let s: TestServer;
  let alice: ClientIdentity;
  let bob: ClientIdentity;

  before(async () => {
    s = await startTestServer('label-pricing', {});
    alice = await certificateIdentity('alice');
    bob = await certificateIdentity('bob');
    for (const [name, owner] of [['labels', 'alice'], ['plain', 'bob']] as const) {
      await request(s.url)
        .post(TENANTS)
        .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec: { owners: [{ kind: 'User', name: owner }] } })
        .expect(201);
    }
  });
  after(async () => {
    await s?.close();
  });

  it('accepts a ConfigMap of 20,000 labels and charges its tenant the entries, a plain write one seat, a dry run its bytes only', async () => {
    const heavy = requestAs(s.url, alice);
    const plain = requestAs(s.url, bob);
    await plain.post('/clusters/plain/api/v1/namespaces/default/configmaps').send(labelled('p0', 2)).expect(201);
    await heavy.post('/clusters/labels/api/v1/namespaces/default/configmaps').send(labelled('h0', 2)).expect(201);
    const [plainBefore, heavyBefore] = [await charged(s.url, 'plain'), await charged(s.url, 'labels')];

    await plain.post('/clusters/plain/api/v1/namespaces/default/configmaps').send(labelled('p1', 2)).expect(201);
    const plainCost = (await charged(s.url, 'plain')) - plainBefore;
    assert.equal(plainCost, 1, 'a plain create is one seat of work');

    const created = await heavy.post('/clusters/labels/api/v1/namespaces/default/configmaps').send(labelled('h1', LABELS)).expect(201);
    assert.equal(Object.keys(created.body.metadata.labels).length, LABELS);
    const heavyCost = (await charged(s.url, 'labels')) - heavyBefore;
    // 3 index entries a label, 192 entries a seat: 312 seats, plus about 36 for the ~290 KB sent and answered.
    assert.ok(heavyCost >= (3 * LABELS) / 192, `a create of ${LABELS} labels was charged ${heavyCost} seats`);

    const dryBefore = await charged(s.url, 'labels');
    await heavy.post('/clusters/labels/api/v1/namespaces/default/configmaps?dryRun=All').send(labelled('h2', LABELS)).expect(201);
    const dryCost = (await charged(s.url, 'labels')) - dryBefore;
    assert.ok(dryCost < 100, `a dry run stores nothing: charged ${dryCost} seats for its bytes`);

    // Deleting it writes the change log's entry of each label.
    const deleteBefore = await charged(s.url, 'labels');
    await heavy.delete('/clusters/labels/api/v1/namespaces/default/configmaps/h1').expect(200);
    assert.ok((await charged(s.url, 'labels')) - deleteBefore >= LABELS / 192);
  });
});
