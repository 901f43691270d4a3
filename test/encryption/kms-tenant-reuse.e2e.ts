import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { eventually } from '../support/eventually.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { ReplicaProcess } from '../fault/support/replica-process.js';
import { kmsConfig, KmsTestPlugin } from './kms-test-plugin.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const SECRETS = (tenant: string) => `/clusters/${tenant}/api/v1/namespaces/default/secrets`;
const secret = (name: string, value: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { password: value } });
const b64 = (s: string) => Buffer.from(s).toString('base64');

/**
 * A tenant's deletion destroys its KMS data keys; every replica forgets the
 * seeds it holds of them when the deletion reaches it, so a new tenant of
 * the same name, created at once, writes with new keys on every replica
 * (a replica still holding the old write seed would store Secrets nobody
 * can read back).
 */
describe('KMS data keys of a deleted tenant on every replica', { timeout: 120_000 }, () => {
  let plugin: KmsTestPlugin;
  let keys: TestDatabase;
  let db: TestDatabase;
  let replicas: ReplicaProcess[] = [];
  let urls: string[];

  before(async () => {
    const redisUrl = process.env.PLINTH_TEST_REDIS_URL;
    assert.ok(redisUrl, 'PLINTH_TEST_REDIS_URL is not set: run with test/run-tests.mjs (redis-server must be installed)');
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-kms-reuse-'));
    plugin = new KmsTestPlugin(path.join(dir, 'kms.sock'));
    await plugin.start();
    const file = path.join(dir, 'encryption.yaml');
    writeFileSync(file, kmsConfig(plugin.endpoint));
    keys = await createTestDatabase('kms_reuse_keys');
    db = await createTestDatabase('kms_reuse');
    // Two server processes (in one process, replicas would share the process-wide plaintext cache and hide what each holds).
    const env = { DATABASE_URL: db.url, REDIS_URL: redisUrl, PLINTH_ENCRYPTION_PROVIDER_CONFIG: file, PLINTH_KEY_STORE_URL: keys.url, PLINTH_KMS_STATUS_INTERVAL_SECONDS: '0.2', PLINTH_WORKERS: '1' };
    replicas = [await ReplicaProcess.start(env), await ReplicaProcess.start(env)];
    urls = replicas.map((r) => r.url);
  });
  after(async () => {
    for (const r of replicas) await r.kill('SIGTERM');
    await plugin?.stop();
    await db?.drop();
    await keys?.drop();
  });

  it('a new tenant of a deleted one\'s name writes Secrets every replica reads back, written through either replica at once', async () => {
    await request(urls[0]).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'acme' } }).expect(201);
    // Each replica writes and reads: each holds acme's write seed and read seed.
    for (const [i, url] of urls.entries()) await request(url).post(SECRETS('acme')).send(secret(`old-${i}`, `old value ${i}`)).expect(201);
    for (const url of urls) for (let i = 0; i < urls.length; i++) await eventually(async () => (await request(url).get(`${SECRETS('acme')}/old-${i}`)).status === 200, { message: 'old secrets readable' });

    await request(urls[0]).delete(`${TENANTS}/acme`).expect(202);
    await eventually(async () => (await request(urls[0]).get(`${TENANTS}/acme`)).status === 404, { timeoutMs: 60_000, message: 'acme deleted' });
    await request(urls[0]).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'acme' } }).expect(201);

    for (const [i, url] of urls.entries()) await request(url).post(SECRETS('acme')).send(secret(`new-${i}`, `new value ${i}`)).expect(201);
    for (const url of urls) {
      for (let i = 0; i < urls.length; i++) {
        // A first read may need to fetch the seed (a 503 with Retry-After while it loads); a destroyed seed never loads.
        let res = await request(url).get(`${SECRETS('acme')}/new-${i}`);
        for (let tries = 0; res.status === 503 && tries < 20; tries++) {
          await new Promise((r) => setTimeout(r, 100));
          res = await request(url).get(`${SECRETS('acme')}/new-${i}`);
        }
        assert.equal(res.status, 200, `new-${i} read through ${url}: ${res.status} ${JSON.stringify(res.body)}`);
        assert.equal(res.body.data.password, b64(`new value ${i}`));
      }
    }
  });
});
