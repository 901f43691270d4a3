import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import type { RunningServer } from '../../apps/api/src/app/server.js';
import { TestCluster } from '../watch/support/cluster.js';
import { configMap, coreRule, VAP, VAPB, validatingBinding, validatingPolicy } from './support/policies.js';
import { WatchService } from '../../apps/api/src/watch/watch.service.js';
import { eventually } from '../support/eventually.js';

/** Resolves once `r`'s change stream has applied `revision`. */
async function reached(r: RunningServer, revision: number): Promise<void> {
  await eventually(() => r.app.get(WatchService).pipeline.cache.revision >= revision, { message: `replica stream at ${revision}` });
}

/** The revision of a write's answer. */
function revisionOf(body: { metadata: { resourceVersion: string } }): number {
  return Number(body.metadata.resourceVersion);
}

/**
 * Policies follow the change stream on every replica (no polling): a policy
 * or binding written through one replica applies on the other as soon as
 * that replica's stream reaches the write's revision — checked right then,
 * without retrying.
 */
describe('admission policies across two replicas (Redis fan-out)', () => {
  let cluster: TestCluster;
  let a: ReturnType<typeof request>;
  let b: ReturnType<typeof request>;

  before(async () => {
    const redisUrl = process.env.PLINTH_TEST_REDIS_URL;
    assert.ok(redisUrl, 'PLINTH_TEST_REDIS_URL is not set: run with test/run-tests.mjs (redis-server must be installed)');
    cluster = await TestCluster.start('policy-replicas', 2, redisUrl);
    a = request(cluster.replicas[0].url);
    b = request(cluster.replicas[1].url);
    await a.post('/api/v1/namespaces').send({ metadata: { name: 'rep' } }).expect(201);
  });
  after(async () => {
    await cluster?.close();
  });

  it('applies a binding created through one replica on the other once its stream reaches it, and stops after the deletion likewise', async () => {
    const rb = cluster.replicas[1];
    // Warm replica b's policy snapshot for the tenant before the policy exists.
    await b.post('/api/v1/namespaces/rep/configmaps').send(configMap('rep', 'warm', { a: '1', b: '2' })).expect(201);
    await a
      .post(VAP)
      .send(validatingPolicy('one-key', { matchConstraints: { resourceRules: [coreRule(['configmaps'])] }, validations: [{ expression: '!has(object.data) || object.data.size() <= 1', message: 'one key at most' }] }))
      .expect(201);
    const binding = await a.post(VAPB).send(validatingBinding('one-key', 'one-key')).expect(201);
    await reached(rb, revisionOf(binding.body));
    const denied = await b.post('/api/v1/namespaces/rep/configmaps').send(configMap('rep', 'two', { a: '1', b: '2' })).expect(422);
    assert.match(denied.body.message, /ValidatingAdmissionPolicy 'one-key' with binding 'one-key' denied request: one key at most$/);
    // The replica that took the write applies it on the writer's next request.
    await a.post('/api/v1/namespaces/rep/configmaps').send(configMap('rep', 'two', { a: '1', b: '2' })).expect(422);
    await a.delete(`${VAPB}/one-key`).expect(200);
    await reached(rb, Number((await a.get('/api/v1/namespaces').expect(200)).body.metadata.resourceVersion));
    await b.post('/api/v1/namespaces/rep/configmaps').send(configMap('rep', 'two', { a: '1', b: '2' })).expect(201);
  });
});
