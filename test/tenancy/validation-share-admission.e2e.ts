import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { installCrd, widgetCrd } from '../crd/crd-fixtures.js';
import { certificateIdentity, type ClientIdentity, requestAs } from '../support/credentials.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const HEAVIES = '/clusters/heavy/apis/example.com/v1/namespaces/default/heavies';

// A tenant whose share of validation time is used up gets its next writes to that resource refused at
// admission, before their bodies are read, instead of after each is read, parsed and taken to validation.
describe('flow control: writes refused before their body while the tenant\'s validation share is used up', () => {
  let s: TestServer;
  let hank: ClientIdentity;

  before(async () => {
    s = await startTestServer('validation-share-admission', { PLINTH_CRD_POLL_INTERVAL_MS: '100', PLINTH_TENANT_VALIDATION_MS_PER_SECOND: '10' });
    hank = await certificateIdentity('hank');
    await request(s.url)
      .post(TENANTS)
      .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'heavy' }, spec: { owners: [{ kind: 'User', name: 'hank' }] } })
      .expect(201);
    const schema = {
      type: 'object',
      properties: { spec: { type: 'object', properties: { l: { type: 'array', maxItems: 1000, items: { type: 'integer' } } }, 'x-kubernetes-validations': [{ rule: 'self.l.all(a, self.l.all(b, a + b > 0))' }] } },
    };
    await installCrd(request(s.url), widgetCrd({ plural: 'heavies', kind: 'Heavy', schema }), '/clusters/heavy');
  });
  after(async () => s?.close());

  it('answers the share\'s 429 without reading the body (a malformed one is not even looked at), and serves the tenant\'s other resources and reads', async () => {
    const as = requestAs(s.url, hank);
    const l = Array.from({ length: 1000 }, (_, i) => i + 1);
    // Writes whose rule runs into the cost limit, eight at a time, until the share is used up (well below zero:
    // all eight pass the check before any is charged).
    let refused: request.Response | undefined;
    for (let round = 0; round < 20 && !refused; round++) {
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => as.post(HEAVIES).send({ metadata: { name: `h-${round}-${i}` }, spec: { l } })));
      for (const r of answers) assert.ok(r.status === 422 || r.status === 429, `${r.status} ${r.text}`);
      refused = answers.find((r) => r.status === 429);
    }
    assert.ok(refused, 'the validation share was never used up');
    assert.match(refused.body.message, /used its share of validation time/);

    // The next write to the resource is refused at admission: its malformed body would be a 400 if it were read.
    const early = await as.post(HEAVIES).set('content-type', 'application/json').send('{"metadata": {"name": ');
    assert.equal(early.status, 429, early.text);
    assert.equal(early.body.reason, 'TooManyRequests');
    assert.match(early.body.message, /used its share of validation time/);
    assert.match(early.headers['retry-after'], /^[1-9]\d*$/);
    const metrics = (await request(s.url).get('/metrics').expect(200)).text;
    assert.match(metrics, /^plinth_flowcontrol_rejected_requests_total\{tenant="heavy",reason="validation-share"\} [1-9]/m);

    // Reads of it, and writes of the tenant's other resources, are served as ever.
    await as.get(HEAVIES).expect(200);
    await as.post('/clusters/heavy/api/v1/namespaces/default/configmaps').send({ metadata: { name: 'still-served' } }).expect(201);
  });
});
