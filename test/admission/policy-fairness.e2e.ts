import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { configMap, coreRule, ensureNamespace, VAP, VAPB, validatingBinding, validatingPolicy } from './support/policies.js';
import { eventually } from '../support/eventually.js';

const EXPENSIVE =
  '[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a + b + c + d + e + f > 0))))))';

describe('admission policies share the tenant validation budget', () => {
  let s: TestServer;
  let hostile: ReturnType<typeof request>;
  let quiet: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('policy-fairness', { PLINTH_TENANTS: 'hostile,quiet', PLINTH_TENANT_VALIDATION_MS_PER_SECOND: '20' });
    hostile = request(`${s.url}/clusters/hostile`);
    quiet = request(`${s.url}/clusters/quiet`);
    await ensureNamespace(hostile, 'h');
    await ensureNamespace(quiet, 'q');
  });
  after(async () => {
    await s?.close();
  });

  it('answers 429 with Retry-After once a tenant spent its share on policies at the cost limit; other tenants are unaffected', async () => {
    await hostile
      .post(VAP)
      .send(validatingPolicy('burn', { failurePolicy: 'Ignore', matchConstraints: { resourceRules: [coreRule(['configmaps'])] }, validations: [{ expression: EXPENSIVE }] }))
      .expect(201);
    await hostile.post(VAPB).send(validatingBinding('burn', 'burn')).expect(201);
    let limited: request.Response | undefined;
    for (let i = 0; i < 400 && !limited; i++) {
      const r = await hostile.post('/api/v1/namespaces/h/configmaps').send(configMap('h', `c${i}`));
      if (r.status === 429) limited = r;
      else assert.equal(r.status, 201, JSON.stringify(r.body));
    }
    assert.ok(limited, 'the hostile tenant was limited');
    assert.equal(limited.body.reason, 'TooManyRequests');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    await quiet.post('/api/v1/namespaces/q/configmaps').send(configMap('q', 'fine')).expect(201);
    // The share refills with time.
    await eventually(async () => {
      const r = await hostile.post('/api/v1/namespaces/h/configmaps').send({ metadata: { generateName: 'later-' } });
      assert.equal(r.status, 201);
    }, { timeoutMs: 30000 });
  });
});
