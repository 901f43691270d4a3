import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import request from 'supertest';
import { decodeEncryptedObject } from '@plinth/storage';
import { eventually } from '../support/eventually.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startTestServerOn, type TestServer } from '../support/test-server.js';
import { kmsConfig, KmsTestPlugin } from './kms-test-plugin.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const secret = (name: string, value: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, labels: { app: 'kms' } }, stringData: { password: value } });
const SECRETS = (tenant: string) => `/clusters/${tenant}/api/v1/namespaces/default/secrets`;
const KMS_PREFIX = 'k8s:enc:kms:v2:testkms:';

describe('KMS v2 (a real gRPC plugin on a unix socket) with a data key per tenant', () => {
  let plugin: KmsTestPlugin;
  let db: TestDatabase;
  let keys: TestDatabase;
  let s: TestServer;
  let admin: pg.Client;
  let keyAdmin: pg.Client;
  let env: Record<string, string>;

  /** The stored `k8s:enc` value of one Secret, and every text the tables hold about it. */
  async function stored(tenant: string, name: string): Promise<{ enc: string; texts: string[] }> {
    const o = await admin.query<{ enc: string; body: string }>(`SELECT body ->> 'k8s:enc' AS enc, body::text AS body FROM objects WHERE tenant = $1 AND resource = 'secrets' AND name = $2`, [tenant, name]);
    const c = await admin.query<{ t: string }>(`SELECT c::text AS t FROM changes c WHERE tenant = $1 AND resource = 'secrets' AND name = $2`, [tenant, name]);
    return { enc: o.rows[0].enc, texts: [o.rows[0].body, ...c.rows.map((r) => r.t)] };
  }

  const keyIdOf = (enc: string) => decodeEncryptedObject(Buffer.from(enc.slice(enc.lastIndexOf(':') + 1), 'base64')).keyID;

  before(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-kms-'));
    plugin = new KmsTestPlugin(path.join(dir, 'kms.sock'));
    await plugin.start();
    const file = path.join(dir, 'encryption.yaml');
    writeFileSync(file, kmsConfig(plugin.endpoint));
    db = await createTestDatabase('kms');
    keys = await createTestDatabase('kms_keys');
    env = { PLINTH_ENCRYPTION_PROVIDER_CONFIG: file, PLINTH_KEY_STORE_URL: keys.url, PLINTH_KMS_STATUS_INTERVAL_SECONDS: '0.2', PLINTH_TENANTS: 'alpha,beta' };
    s = await startTestServerOn(db, env);
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    keyAdmin = new pg.Client({ connectionString: keys.url });
    await keyAdmin.connect();
  });
  after(async () => {
    await admin?.end();
    await keyAdmin?.end();
    await s?.close();
    await plugin?.stop();
    await db?.drop();
    await keys?.drop();
  });

  it('stores upstream\'s EncryptedObject under k8s:enc:kms:v2:<name>:, no plaintext anywhere, one KMS Encrypt per tenant and key_id, none per write', async () => {
    const before = plugin.snapshot();
    for (let i = 0; i < 20; i++) await request(s.url).post(SECRETS('alpha')).send(secret(`a${i}`, `alpha-plain-${i}`)).expect(201);
    await request(s.url).post(SECRETS('beta')).send(secret('b0', 'beta-plain-0')).expect(201);
    await request(s.url).put(`${SECRETS('alpha')}/a0`).send(secret('a0', 'alpha-plain-changed')).expect(200);
    const after = plugin.snapshot();
    // One seed per tenant, wrapped once; no Decrypt: the seeds this process made stay in memory.
    assert.equal(after.Encrypt - before.Encrypt, 2);
    assert.equal(after.Decrypt - before.Decrypt, 0);
    const a0 = await stored('alpha', 'a0');
    assert.ok(a0.enc.startsWith(KMS_PREFIX), a0.enc);
    assert.equal(keyIdOf(a0.enc), plugin.keyId);
    assert.ok(a0.texts.length >= 3, 'row, and the change log\'s copies');
    for (const t of a0.texts) for (const p of ['alpha-plain-0', 'alpha-plain-changed', b64('alpha-plain-0'), b64('alpha-plain-changed')]) assert.equal(t.includes(p), false, `${p} in ${t.slice(0, 80)}`);
    const rows = await keyAdmin.query<{ tenant: string; n: string }>(`SELECT tenant, count(*) AS n FROM tenant_data_keys GROUP BY tenant ORDER BY tenant`);
    assert.deepEqual(rows.rows.map((r) => [r.tenant, Number(r.n)]), [['alpha', 1], ['beta', 1]]);
    // The objects' table holds no key material: the wrapped seed is only in the key store.
    const wrapped = (await keyAdmin.query<{ w: Buffer }>(`SELECT wrapped AS w FROM tenant_data_keys WHERE tenant = 'alpha'`)).rows[0].w;
    const all = await admin.query<{ t: string }>(`SELECT string_agg(o::text, '') AS t FROM objects o`);
    assert.equal(all.rows[0].t.includes(wrapped.toString('base64')), false);
    const got = await request(s.url).get(`${SECRETS('alpha')}/a0`).expect(200);
    assert.equal(got.body.data.password, b64('alpha-plain-changed'));
    const list = await request(s.url).get(`${SECRETS('alpha')}?labelSelector=app%3Dkms`).expect(200);
    assert.equal(list.body.items.length, 20);
  });

  it('a value copied into another tenant\'s row does not decrypt there (the object\'s key is authenticated)', async () => {
    await request(s.url).post(SECRETS('beta')).send(secret('victim', 'beta-victim')).expect(201);
    const own = await stored('beta', 'victim');
    const a1 = await stored('alpha', 'a1');
    await admin.query(`UPDATE objects SET body = jsonb_set(body, '{k8s:enc}', to_jsonb($1::text)) WHERE tenant = 'beta' AND resource = 'secrets' AND name = 'victim'`, [a1.enc]);
    const r = await request(s.url).get(`${SECRETS('beta')}/victim`).expect(500);
    assert.match(r.body.message, /cipher: message authentication failed/);
    await admin.query(`UPDATE objects SET body = jsonb_set(body, '{k8s:enc}', to_jsonb($1::text)) WHERE tenant = 'beta' AND resource = 'secrets' AND name = 'victim'`, [own.enc]);
    assert.equal((await request(s.url).get(`${SECRETS('beta')}/victim`).expect(200)).body.data.password, b64('beta-victim'));
  });

  it('reports the plugin in /readyz (kms-providers) and exports upstream\'s apiserver_envelope_encryption_* metrics', async () => {
    const ready = await request(s.url).get('/readyz?verbose').expect(200);
    assert.match(ready.text, /\[\+\]kms-providers ok/);
    await request(s.url).get('/readyz/kms-providers').expect(200);
    const m = (await request(s.url).get('/metrics').expect(200)).text;
    assert.match(m, /apiserver_envelope_encryption_key_id_hash_total\{transformation_type="to_storage",provider_name="testkms",key_id_hash="sha256:[0-9a-f]{64}",apiserver_id_hash="sha256:[0-9a-f]{64}"\} [1-9]/);
    assert.match(m, /apiserver_envelope_encryption_kms_operations_latency_seconds_count\{provider_name="testkms",method_name="Encrypt",grpc_status_code="OK"\} [1-9]/);
    assert.match(m, /apiserver_envelope_encryption_key_id_hash_status_last_timestamp_seconds\{provider_name="testkms"/);
    assert.match(m, /apiserver_storage_transformation_operations_total\{resource="secrets",transformation_type="to_storage",transformer_prefix="k8s:enc:kms:v2:",status="OK"\} [1-9]/);
    assert.equal(m.includes(plugin.keyId), false, 'the key_id itself is not exported, only its hash');
  });

  it('a new key_id: new writes wrap a new seed under it, old values still read, and an update rewrites a stale one', async () => {
    const old = plugin.keyId;
    const fresh = plugin.rotate();
    let n = 0;
    await eventually(
      async () => {
        const name = `rot-${n++}`;
        await request(s.url).post(SECRETS('alpha')).send(secret(name, 'rot')).expect(201);
        return keyIdOf((await stored('alpha', name)).enc) === fresh;
      },
      { timeoutMs: 20_000, intervalMs: 100, message: 'a write under the new key_id' },
    );
    assert.equal(keyIdOf((await stored('alpha', 'a5')).enc), old);
    const a5 = await request(s.url).get(`${SECRETS('alpha')}/a5`).expect(200);
    assert.equal(a5.body.data.password, b64('alpha-plain-5'));
    await request(s.url).put(`${SECRETS('alpha')}/a5`).send(a5.body).expect(200);
    assert.equal(keyIdOf((await stored('alpha', 'a5')).enc), fresh, 'read as stale (another key_id), rewritten under the current one');
    const gens = await keyAdmin.query<{ n: string }>(`SELECT count(*) AS n FROM tenant_data_keys WHERE tenant = 'alpha'`);
    assert.equal(Number(gens.rows[0].n), 2, 'one seed per key generation');
  });

  it('a stopped plugin: encrypted writes get 503 with Retry-After, cached reads and everything else go on, and it recovers by itself', async () => {
    await plugin.stop();
    await eventually(async () => (await request(s.url).get('/readyz/kms-providers')).status === 500, { timeoutMs: 20_000, intervalMs: 100, message: 'kms-providers to fail' });
    const ready = await request(s.url).get('/readyz?verbose').expect(503);
    assert.match(ready.text, /\[-\]kms-providers failed: failed to perform status section of the healthz check for KMS Provider testkms/);
    const refused = await request(s.url).post(SECRETS('alpha')).send(secret('while-down', 'x')).expect(503);
    assert.ok(refused.headers['retry-after'], 'Retry-After');
    assert.equal(refused.body.reason, 'ServiceUnavailable');
    assert.match(refused.body.message, /KMS provider testkms is unavailable/);
    await request(s.url).put(`${SECRETS('alpha')}/a1`).send(secret('a1', 'y')).expect(503);
    // Reads whose seeds are in memory, and resources the configuration does not encrypt, are served.
    assert.equal((await request(s.url).get(`${SECRETS('alpha')}/a2`).expect(200)).body.data.password, b64('alpha-plain-2'));
    await request(s.url).get(SECRETS('alpha')).expect(200);
    await request(s.url).post('/clusters/alpha/api/v1/namespaces/default/configmaps').send({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'while-down' } }).expect(201);
    await plugin.start();
    await eventually(async () => (await request(s.url).post(SECRETS('alpha')).send(secret('after-recovery', 'z'))).status === 201, { timeoutMs: 20_000, intervalMs: 100, message: 'writes to recover' });
    await request(s.url).get('/readyz/kms-providers').expect(200);
  });

  it('a slow plugin (past the timeout) is a down plugin: 503 for encrypted writes, then recovery', async () => {
    plugin.delayMs = 2500;
    await eventually(async () => (await request(s.url).get('/readyz/kms-providers')).status === 500, { timeoutMs: 20_000, intervalMs: 100, message: 'kms-providers to fail on timeouts' });
    await request(s.url).post(SECRETS('alpha')).send(secret('while-slow', 'x')).expect(503);
    await request(s.url).get(`${SECRETS('alpha')}/a3`).expect(200);
    plugin.delayMs = 0;
    await eventually(async () => (await request(s.url).post(SECRETS('alpha')).send(secret('after-slow', 'z'))).status === 201, { timeoutMs: 20_000, intervalMs: 100, message: 'writes to recover' });
  });

  it('a restarted server unwraps each seed once (one Decrypt per tenant key generation, not per read), watches included', async () => {
    const b0 = await request(s.url).get(`${SECRETS('beta')}/b0`).expect(200);
    const from = Number(b0.body.metadata.resourceVersion) - 1;
    await s.close();
    s = await startTestServerOn(db, env);
    const before = plugin.snapshot();
    // A watch from before b0's creation: its seed is fetched (one Decrypt) before the event is decrypted.
    const watched = await fetch(`${s.url}${SECRETS('beta')}?watch=1&resourceVersion=${from}&timeoutSeconds=1`);
    const events = (await watched.text()).trim().split('\n').map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string }; data?: Record<string, string> } });
    const added = events.find((e) => e.object.metadata.name === 'b0');
    assert.equal(added?.type, 'ADDED', JSON.stringify(events).slice(0, 300));
    assert.equal(added?.object.data?.password, b64('beta-plain-0'));
    for (let i = 0; i < 3; i++) {
      const list = await request(s.url).get(SECRETS('alpha')).expect(200);
      assert.ok(list.body.items.some((x: { metadata: { name: string }; data: { password: string } }) => x.metadata.name === 'a7' && x.data.password === b64('alpha-plain-7')));
    }
    await request(s.url).get(`${SECRETS('beta')}/b0`).expect(200);
    const after = plugin.snapshot();
    // alpha: two generations (before and after the key_id change); beta: one.
    assert.equal(after.Decrypt - before.Decrypt, 3);
  });
});
