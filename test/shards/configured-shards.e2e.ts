import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { TestPostgres } from '../support/test-postgres.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { SHARDS, waitShardReady } from './support/shards.js';

// docker-compose.yml registers its second PostgreSQL this way.
describe('shards named in PLINTH_SHARDS', { timeout: 120_000 }, () => {
  let s: TestServer;
  let d: TestPostgres;

  before(async () => {
    d = await TestPostgres.start('configured');
    s = await startTestServer('configured_shards', { PLINTH_SHARDS: `extra=${d.url}` });
  });
  after(async () => {
    await s?.close();
    await d?.close();
  });

  it('are registered at start as a Secret and a Shard, and become ready; the password stays in the Secret', async () => {
    const shard = await waitShardReady(s.url, 'extra');
    assert.deepEqual(shard.spec.secretRef, { name: 'shard-extra', namespace: 'default', key: 'url' });
    assert.doesNotMatch(JSON.stringify(shard), /plinth@/);
    const secret = (await request(s.url).get('/api/v1/namespaces/default/secrets/shard-extra').expect(200)).body;
    assert.equal(Buffer.from(secret.data.url, 'base64').toString(), d.url);
    const created = (await request(s.url).post('/apis/tenancy.plinth.dev/v1beta1/tenants').send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'on-extra' }, spec: { shard: 'extra' } }).expect(201)).body;
    assert.equal(created.status.shard, 'extra');
    await request(s.url).post('/clusters/on-extra/api/v1/namespaces/default/configmaps').send({ metadata: { name: 'x' } }).expect(201);
    assert.equal((await request(s.url).get(`${SHARDS}`).expect(200)).body.items.length, 2);
  });
});
