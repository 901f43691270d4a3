import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ChangeLogRepository, createDatabase, type Database, EncryptionRotationRepository, installResourceTransformers, ObjectStoreRepository, openChange } from '@plinth/storage';
import { loadEncryptionConfig, ruleFor } from '../../apps/api/src/encryption/encryption-transformers.js';
import { eventually } from '../support/eventually.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { aesgcmConfig, b64, configFile, KEY1, KEY2 } from './rotation-support.js';

/** Installs the configuration `content` into storage, as the server does; returns the uninstall. */
function use(content: string): () => void {
  const { rules } = loadEncryptionConfig(configFile(content).file);
  return installResourceTransformers({ forResource: (r) => ruleFor(rules, r) });
}

const secret = (name: string, value: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'race' }, data: { v: b64(value) } });

describe('the rotation\'s rewrites against concurrent writes (storage, read and written directly)', () => {
  let tdb: TestDatabase;
  let db: Database;
  let restore = () => {};
  const repo = new EncryptionRotationRepository();

  before(async () => {
    tdb = await createTestDatabase('encryption-rotation-race');
    db = createDatabase({ connectionString: tdb.url, maxConnections: 6 });
  });
  afterEach(() => restore());
  after(async () => {
    await db?.destroy();
    await tdb?.drop();
  });

  async function storedPrefix(name: string): Promise<{ enc: string; revision: number }> {
    const { rows } = await sql<{ enc: string; revision: number }>`SELECT body ->> 'k8s:enc' AS enc, revision FROM objects WHERE resource = 'secrets' AND namespace = 'race' AND name = ${name}`.execute(db);
    return rows[0];
  }

  it('a write committed while the rotation waits on its row wins: the rewrite is dropped, never laid over it', async () => {
    const objects = new ObjectStoreRepository(db);
    const key = { tenant: 'default', resource: 'secrets', namespace: 'race', name: 'contended' };
    restore = use(aesgcmConfig([['key1', KEY1]]));
    const created = await objects.create(key, secret('contended', 'before'));
    restore();
    restore = use(aesgcmConfig([['key2', KEY2], ['key1', KEY1]]));
    let rotation: ReturnType<EncryptionRotationRepository['rotateObjects']> | undefined;
    await db.transaction().execute(async (tx) => {
      // The write holds the row; the rotation reads the committed (stale) row and then waits on the lock.
      await objects.update(key, secret('contended', 'after'), created.revision, tx);
      rotation = repo.rotateObjects(db, undefined, 1000);
      await eventually(async () => {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE objects SET body%'`.execute(db);
        return rows[0].n === 1;
      }, { message: 'the rotation waits on the row the write holds' });
    });
    const batch = await rotation!;
    assert.equal(batch.superseded, 1);
    assert.equal(batch.failed, 0);
    assert.equal((await objects.get(key))?.body.data && ((await objects.get(key))!.body.data as { v: string }).v, b64('after'));
    assert.match((await storedPrefix('contended')).enc, /^k8s:enc:aesgcm:v1:key2:/);
  });

  it('re-encrypts an object and its history in place: same revision, same plaintext, readable once the old key is gone; an unreadable value is counted and left', async () => {
    const objects = new ObjectStoreRepository(db);
    const key = { tenant: 'default', resource: 'secrets', namespace: 'race', name: 'kept' };
    restore = use(aesgcmConfig([['key1', KEY1]]));
    const v1 = await objects.create(key, secret('kept', 'one'));
    const v2 = await objects.update(key, secret('kept', 'two'), v1.revision);
    restore();
    restore = use(aesgcmConfig([['key2', KEY2], ['key1', KEY1]]));
    const first = await repo.rotateObjects(db, undefined, 1000);
    assert.ok(first.rewritten >= 1);
    assert.equal((await storedPrefix('kept')).revision, v2.revision, 'no new revision');
    assert.match((await storedPrefix('kept')).enc, /^k8s:enc:aesgcm:v1:key2:/);
    const changes = await repo.rotateChanges(db, undefined, 1000);
    assert.ok(changes.rewritten >= 1);
    const again = await repo.rotateObjects(db, undefined, 1000);
    assert.equal(again.rewritten, 0, 'a second pass finds nothing stale');
    restore();
    restore = use(aesgcmConfig([['key2', KEY2]], false));
    assert.equal(((await objects.get(key))?.body.data as { v: string }).v, b64('two'));
    const history = (await new ChangeLogRepository(db).changesAfter(v1.revision - 1, 100)).filter((c) => c.key.name === 'kept').map(openChange);
    assert.deepEqual(history.map((c) => [c.type, c.unreadable, (c.object.data as { v: string }).v, c.prevObject && (c.prevObject.data as { v: string }).v]), [
      ['ADDED', undefined, b64('one'), null],
      ['MODIFIED', undefined, b64('two'), b64('one')],
    ]);

    // A value whose key is in no configuration cannot be rewritten: counted as failed, its row untouched.
    restore();
    restore = use(aesgcmConfig([['key3', KEY1]]));
    const lost = { ...key, name: 'orphan' };
    await objects.create(lost, secret('orphan', 'x'));
    const orphanBefore = await storedPrefix('orphan');
    restore();
    restore = use(aesgcmConfig([['key2', KEY2]], false));
    const batch = await repo.rotateObjects(db, undefined, 1000);
    assert.equal(batch.failed, 1);
    assert.equal(batch.failures[0].key.name, 'orphan');
    assert.deepEqual(await storedPrefix('orphan'), orphanBefore);
  });
});
