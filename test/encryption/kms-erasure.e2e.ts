import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import request from 'supertest';
import { eventually } from '../support/eventually.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startTestServerOn, type TestServer } from '../support/test-server.js';
import { kmsConfig, KmsTestPlugin } from './kms-test-plugin.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const SECRETS = (tenant: string) => `/clusters/${tenant}/api/v1/namespaces/default/secrets`;
const CONFIGMAPS = (tenant: string) => `/clusters/${tenant}/api/v1/namespaces/default/configmaps`;
const secret = (name: string, value: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { password: value } });

/** A copy of `source` as a new database (a backup restored), taken while no server uses it. */
async function restoreCopy(source: TestDatabase): Promise<TestDatabase> {
  const adminUrl = process.env.PLINTH_TEST_PG_ADMIN_URL!;
  const name = `${source.name}_bk`;
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE "${name}" TEMPLATE "${source.name}"`);
  } finally {
    await c.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    name,
    drop: async () => {
      const d = new pg.Client({ connectionString: adminUrl });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).finally(() => d.end());
    },
  };
}

/** Every row of the object and change tables as text, as a data-only dump writes them. */
async function dumpText(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ t: string }>(`SELECT (SELECT coalesce(string_agg(o::text, E'\\n'), '') FROM objects o) || E'\\n' || (SELECT coalesce(string_agg(c::text, E'\\n'), '') FROM changes c) AS t`);
    return rows[0].t;
  } finally {
    await c.end();
  }
}

describe('crypto-erasure: a deleted tenant\'s Secrets stay unreadable in a backup taken before its deletion', () => {
  let plugin: KmsTestPlugin;
  let db: TestDatabase;
  let backup: TestDatabase | undefined;
  let keys: TestDatabase;
  let s: TestServer | undefined;
  let env: Record<string, string>;

  before(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-kms-erase-'));
    plugin = new KmsTestPlugin(path.join(dir, 'kms.sock'));
    await plugin.start();
    const file = path.join(dir, 'encryption.yaml');
    writeFileSync(file, kmsConfig(plugin.endpoint));
    db = await createTestDatabase('kms_erasure');
    keys = await createTestDatabase('kms_erasure_keys');
    env = { PLINTH_ENCRYPTION_PROVIDER_CONFIG: file, PLINTH_KEY_STORE_URL: keys.url, PLINTH_KMS_STATUS_INTERVAL_SECONDS: '0.2' };
  });
  after(async () => {
    await s?.close();
    await plugin?.stop();
    await db?.drop();
    await backup?.drop();
    await keys?.drop();
  });

  it('restored with the same configuration and key store, the backup serves every tenant\'s Secrets but the deleted one\'s, which get a clear error', async () => {
    s = await startTestServerOn(db, env);
    for (const t of ['alpha', 'beta']) {
      await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: t } }).expect(201);
      for (let i = 0; i < 3; i++) await request(s.url).post(SECRETS(t)).send(secret(`s${i}`, `${t}-secret-value-${i}`)).expect(201);
      await request(s.url).post(CONFIGMAPS(t)).send({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain' }, data: { k: `${t}-not-encrypted` } }).expect(201);
    }
    await s.close();
    s = undefined;
    // The backup: the object database as it was before the deletion (the key store is not in it).
    backup = await restoreCopy(db);

    s = await startTestServerOn(db, env);
    await request(s.url).delete(`${TENANTS}/beta`).expect(202);
    await eventually(async () => (await request(s!.url).get(`${TENANTS}/beta`)).status === 404, { timeoutMs: 30_000, message: 'beta deleted' });
    const k = new pg.Client({ connectionString: keys.url });
    await k.connect();
    const left = await k.query<{ tenant: string }>(`SELECT DISTINCT tenant FROM tenant_data_keys ORDER BY tenant`).finally(() => k.end());
    assert.deepEqual(left.rows.map((r) => r.tenant), ['alpha'], 'beta\'s keys destroyed, alpha\'s kept');
    await s.close();
    s = undefined;

    // The backup restored into a fresh database, served with the same configuration and key store.
    s = await startTestServerOn(backup, env);
    for (let i = 0; i < 3; i++) {
      assert.equal((await request(s.url).get(`${SECRETS('alpha')}/s${i}`).expect(200)).body.data.password, b64(`alpha-secret-value-${i}`));
    }
    assert.equal((await request(s.url).get(SECRETS('alpha')).expect(200)).body.items.length, 3);
    const decrypts = plugin.calls.Decrypt;
    const erased = await request(s.url).get(`${SECRETS('beta')}/s0`).expect(500);
    assert.equal(erased.body.reason, 'InternalError');
    assert.match(erased.body.message, /is not in the key store: its tenant was deleted \(crypto-erasure\)/);
    const list = await request(s.url).get(SECRETS('beta')).expect(500);
    assert.match(list.body.message, /unable to transform key "\/registry\/secrets\/default\/s\d": failed to decrypt DEK, error: data key [0-9a-f-]+ is not in the key store: its tenant was deleted \(crypto-erasure\)/);
    assert.equal(plugin.calls.Decrypt, decrypts, 'the key is missing before the plugin is asked: no Decrypt for the erased tenant');
    // Crypto-erasure covers what is encrypted, nothing else: beta's ConfigMap is in the backup as it was.
    assert.equal((await request(s.url).get(`${CONFIGMAPS('beta')}/plain`).expect(200)).body.data.k, 'beta-not-encrypted');
    const text = await dumpText(backup.url);
    for (const t of ['alpha', 'beta']) for (let i = 0; i < 3; i++) {
      assert.equal(text.includes(`${t}-secret-value-${i}`), false);
      assert.equal(text.includes(b64(`${t}-secret-value-${i}`)), false);
    }
  });
});
