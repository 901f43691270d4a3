import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { eventually } from '../support/eventually.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { TestPostgres } from '../support/test-postgres.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { conditionOf, query, registerShard, TENANTS, waitShardReady } from '../shards/support/shards.js';
import { kmsConfig, KmsTestPlugin } from './kms-test-plugin.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const P = '/clusters/mover/api/v1/namespaces/default/secrets';

describe('KMS v2 and shards: the key store is platform-wide, so a tenant moved to another PostgreSQL server reads its Secrets there', () => {
  let plugin: KmsTestPlugin;
  let keys: TestDatabase;
  let b: TestPostgres;
  let c: TestPostgres;
  let s: TestServer;

  before(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-kms-move-'));
    plugin = new KmsTestPlugin(path.join(dir, 'kms.sock'));
    await plugin.start();
    const file = path.join(dir, 'encryption.yaml');
    writeFileSync(file, kmsConfig(plugin.endpoint));
    keys = await createTestDatabase('kms_move_keys');
    [b, c] = await Promise.all([TestPostgres.start('kms_move_b'), TestPostgres.start('kms_move_c')]);
    s = await startTestServer('kms_move', { PLINTH_ENCRYPTION_PROVIDER_CONFIG: file, PLINTH_KEY_STORE_URL: keys.url, PLINTH_KMS_STATUS_INTERVAL_SECONDS: '0.5' });
    // The shards' connection Secrets are themselves encrypted with KMS v2 (the platform tenant's key).
    await registerShard(s.url, 'b', b.url);
    await registerShard(s.url, 'c', c.url);
    await Promise.all([waitShardReady(s.url, 'b'), waitShardReady(s.url, 'c')]);
  });
  after(async () => {
    await s?.close();
    await b?.close();
    await c?.close();
    await plugin?.stop();
    await keys?.drop();
  });

  it('copies the ciphertext as it is; the moved Secrets decrypt on the destination and new writes go on', async () => {
    await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'mover' }, spec: { shard: 'b' } }).expect(201);
    for (let i = 0; i < 5; i++) await request(s.url).post(P).send({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `s${i}` }, stringData: { v: `moving-value-${i}` } }).expect(201);
    const [onB] = await query<{ enc: string }>(b.url, `SELECT body ->> 'k8s:enc' AS enc FROM objects WHERE tenant = 'mover' AND resource = 'secrets' AND name = 's0'`);
    assert.ok(onB.enc.startsWith('k8s:enc:kms:v2:testkms:'), onB.enc);
    await request(s.url).patch(`${TENANTS}/mover`).set('Content-Type', 'application/merge-patch+json').send({ spec: { shard: 'c' } }).expect(200);
    await eventually(async () => {
      const t = (await request(s.url).get(`${TENANTS}/mover`)).body;
      return conditionOf(t, 'Moved')?.status === 'True' && t.status.shard === 'c';
    }, { message: 'the Moved condition', timeoutMs: 60_000 });
    const [onC] = await query<{ enc: string }>(c.url, `SELECT body ->> 'k8s:enc' AS enc FROM objects WHERE tenant = 'mover' AND resource = 'secrets' AND name = 's0'`);
    assert.equal(onC.enc, onB.enc, 'the stored value copied unchanged');
    for (let i = 0; i < 5; i++) assert.equal((await request(s.url).get(`${P}/s${i}`).expect(200)).body.data.v, b64(`moving-value-${i}`));
    await request(s.url).post(P).send({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'after-move' }, stringData: { v: 'x' } }).expect(201);
    const [newOnC] = await query<{ enc: string }>(c.url, `SELECT body ->> 'k8s:enc' AS enc FROM objects WHERE tenant = 'mover' AND resource = 'secrets' AND name = 'after-move'`);
    assert.ok(newOnC.enc.startsWith('k8s:enc:kms:v2:testkms:'));
  });
});
