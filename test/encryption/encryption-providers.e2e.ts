import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ChangeLogRepository, createDatabase, type Database, installResourceTransformers, ObjectListRepository, ObjectStoreRepository, openChange } from '@plinth/storage';
import { loadEncryptionConfig, ruleFor } from '../../apps/api/src/encryption/encryption-transformers.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

/** Installs an EncryptionConfiguration file encrypting secrets with `provider` (key `k1` of `bytes` bytes), as the server does. */
function useProvider(provider: string, bytes: number): () => void {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'plinth-enc-p-')), 'enc.json');
  const keys = { keys: [{ name: 'k1', secret: randomBytes(bytes).toString('base64') }] };
  writeFileSync(file, JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'EncryptionConfiguration', resources: [{ resources: ['secrets'], providers: [{ [provider]: keys }] }] }));
  const { rules } = loadEncryptionConfig(file);
  return installResourceTransformers({ forResource: (r) => ruleFor(rules, r) });
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('every provider keeps a Secret\'s value out of the object rows and the change log', () => {
  let tdb: TestDatabase;
  let db: Database;
  let restore = () => {};

  before(async () => {
    tdb = await createTestDatabase('encryption-providers');
    db = createDatabase({ connectionString: tdb.url, maxConnections: 4 });
  });
  afterEach(() => restore());
  after(async () => {
    await db?.destroy();
    await tdb?.drop();
  });

  /** Every row of both tables as text, as a data-only dump would write them. */
  async function dump(): Promise<string> {
    const { rows } = await sql<{ t: string }>`SELECT (SELECT coalesce(string_agg(o::text, E'\n'), '') FROM objects o) || E'\n' || (SELECT coalesce(string_agg(c::text, E'\n'), '') FROM changes c) AS t`.execute(db);
    return rows[0].t;
  }

  for (const [provider, bytes] of [['aescbc', 32], ['aesgcm', 16], ['secretbox', 32]] as const) {
    it(`${provider}: rows hold k8s:enc:${provider}:v1:k1: and no plaintext; get, list and the change log give the object back`, async () => {
      restore = useProvider(provider, bytes);
      const objects = new ObjectStoreRepository(db);
      const name = `s-${provider}`;
      const key = { tenant: 'default', resource: 'secrets', namespace: 'ns', name };
      const first = `first-${provider}-value`;
      const second = `second-${provider}-value`;
      const created = await objects.create(key, { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'ns', labels: { p: provider } }, data: { v: b64(first) } });
      const updated = await objects.update(key, { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'ns', labels: { p: provider } }, data: { v: b64(second) } }, created.revision);
      const { rows } = await sql<{ enc: string }>`SELECT body ->> 'k8s:enc' AS enc FROM objects WHERE resource = 'secrets' AND name = ${name}`.execute(db);
      assert.ok(rows[0].enc.startsWith(`k8s:enc:${provider}:v1:k1:`), rows[0].enc);
      const prev = await sql<{ enc: string }>`SELECT prev_object ->> 'k8s:enc' AS enc FROM changes WHERE resource = 'secrets' AND name = ${name} AND prev_object IS NOT NULL`.execute(db);
      assert.ok(prev.rows[0].enc.startsWith(`k8s:enc:${provider}:v1:k1:`), prev.rows[0].enc);
      const text = await dump();
      for (const plain of [first, second, b64(first), b64(second)]) assert.equal(text.includes(plain), false, `${plain} found in the tables`);
      assert.deepEqual((await objects.get(key))?.body.data, { v: b64(second) });
      const listed = await new ObjectListRepository(db).list({ tenant: 'default', resource: 'secrets', namespace: 'ns', labelRequirements: [{ key: 'p', operator: 'Equals', values: [provider] }] });
      assert.deepEqual(listed.items.map((i) => i.body.data), [{ v: b64(second) }]);
      const past = await new ObjectListRepository(db).list({ tenant: 'default', resource: 'secrets', namespace: 'ns', atRevision: created.revision, labelRequirements: [{ key: 'p', operator: 'Equals', values: [provider] }] });
      assert.deepEqual(past.items.map((i) => i.body.data), [{ v: b64(first) }]);
      const history = (await new ChangeLogRepository(db).changesAfter(created.revision - 1, 10)).filter((c) => c.key.name === name).map(openChange);
      assert.deepEqual(history.map((c) => [c.type, (c.object.data as { v: string }).v, c.object.metadata && (c.object.metadata as { resourceVersion: string }).resourceVersion]), [
        ['ADDED', b64(first), String(created.revision)],
        ['MODIFIED', b64(second), String(updated.revision)],
      ]);
      assert.deepEqual(history[1].prevObject?.data, { v: b64(first) });
    });
  }
});
