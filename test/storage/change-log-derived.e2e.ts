import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { ChangeLogRepository, type ChangeEvent, createDatabase, type DB, type ObjectKey, ObjectListRepository, ObjectStoreRepository, TenantRepository, withResourceVersion } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

type Body = Record<string, unknown>;

/** What a follower must see for one committed write, built from the write itself. */
interface Expected {
  revision: number;
  key: ObjectKey;
  type: ChangeEvent['type'];
  body: Body;
  prev: { body: Body; revision: number } | null;
}

const NS = 'derived';
const key = (name: string, namespace = NS, tenant = 'default'): ObjectKey => ({ tenant, resource: 'configmaps', namespace, name });
/** A body of about `kib` KiB of non-ASCII text (stored out of line, TOASTed, above 2 KiB), distinct per `tag`. */
function big(name: string, tag: string, kib: number): Body {
  const unit = `ключ-${tag}-日本語-🚀-\u00e9\u0301-`;
  return { metadata: { name, namespace: NS, labels: { v: tag } }, data: { text: unit.repeat(Math.ceil((kib * 1024) / Buffer.byteLength(unit))), nul: 'a\\u0000b', quote: '"\'\n\t' } };
}
const small = (name: string, tag: string): Body => ({ metadata: { name, namespace: NS, labels: { v: tag } }, data: { v: `ü-${tag}` } });

/** The events a follower must read after `from`, optionally of one scope. */
function expectedAfter(all: Expected[], from: number, keep: (e: Expected) => boolean = () => true): ChangeEvent[] {
  return all
    .filter((e) => e.revision > from && keep(e))
    .map((e) => ({
      revision: e.revision,
      key: e.key,
      type: e.type,
      object: withResourceVersion(e.body, e.revision),
      prevObject: e.prev ? withResourceVersion(e.prev.body, e.prev.revision) : null,
    }));
}

/** Reads every change after `from` (in batches of 3, so batches end on every kind of row). */
async function readAll(changes: ChangeLogRepository, from: number): Promise<ChangeEvent[]> {
  const out: ChangeEvent[] = [];
  for (let after = from; ; ) {
    const batch = await changes.changesAfter(after, 3);
    if (batch.length === 0) return out;
    out.push(...batch);
    after = batch[batch.length - 1].revision;
  }
}

/** Reads every change of a scope after `from` with changesInScope (batches of 2). */
async function readScope(changes: ChangeLogRepository, from: number, scope: Parameters<ChangeLogRepository['changesInScope']>[2]): Promise<ChangeEvent[]> {
  const out: ChangeEvent[] = [];
  for (let after = from; ; ) {
    const { events, scannedTo } = await changes.changesInScope(after, 2, scope);
    out.push(...events);
    if (events.length < 2) return out;
    after = scannedTo;
  }
}

describe('change log without stored copies (migration 0010): every event derived exactly', () => {
  let tdb: TestDatabase;
  let db: Kysely<DB>;
  let objects: ObjectStoreRepository;
  let changes: ChangeLogRepository;
  let lists: ObjectListRepository;
  const log: Expected[] = [];
  let start = 0;

  /** Applies writes and records what a follower must see for each. */
  const current = new Map<string, { body: Body; revision: number }>();
  const id = (k: ObjectKey) => `${k.tenant}/${k.namespace}/${k.name}`;
  async function create(k: ObjectKey, body: Body, tx?: Kysely<DB>): Promise<void> {
    const s = await objects.create(k, body, tx);
    log.push({ revision: s.revision, key: k, type: 'ADDED', body, prev: null });
    current.set(id(k), { body, revision: s.revision });
  }
  async function update(k: ObjectKey, body: Body, tx?: Kysely<DB>): Promise<void> {
    const prev = current.get(id(k))!;
    const s = await objects.update(k, body, prev.revision, tx);
    log.push({ revision: s.revision, key: k, type: 'MODIFIED', body, prev });
    current.set(id(k), { body, revision: s.revision });
  }
  async function remove(k: ObjectKey): Promise<void> {
    const prev = current.get(id(k))!;
    const s = await objects.delete(k, prev.revision);
    log.push({ revision: s.revision, key: k, type: 'DELETED', body: prev.body, prev });
    current.delete(id(k));
  }

  before(async () => {
    tdb = await createTestDatabase('derived');
    db = createDatabase({ connectionString: tdb.url, maxConnections: 4 });
    objects = new ObjectStoreRepository(db);
    changes = new ChangeLogRepository(db);
    lists = new ObjectListRepository(db);
    await new TenantRepository(db).ensure('second');
    start = await objects.currentRevision();
    // Every kind of history: a large unicode object updated twice, deleted, created again; a create and an update of
    // one key committed together; interleaved keys, another namespace and another tenant with the same names.
    await create(key('a'), big('a', 'a1', 12));
    await create(key('b'), small('b', 'b1'));
    await update(key('a'), big('a', 'a2', 3));
    await create(key('a', 'other'), small('a', 'o1'));
    await update(key('b'), small('b', 'b2'));
    await update(key('a'), small('a', 'a3'));
    await db.transaction().execute(async (tx) => {
      await create(key('c'), big('c', 'c1', 5), tx);
      await update(key('c'), big('c', 'c2', 5), tx);
    });
    await remove(key('a'));
    await create(key('a'), big('a', 'a4', 9));
    await remove(key('b'));
    await update(key('c'), small('c', 'c3'));
    await create(key('b', NS, 'second'), small('b', 'second'));
  });
  after(async () => {
    await db.destroy();
    await tdb.drop();
  });

  it('stores no copy of a body in the change log: creates keep none, updates and deletes only the state before', async () => {
    const { rows } = await sql<{ type: string; object: boolean; prev: boolean }>`
      SELECT type, object IS NOT NULL AS object, prev_object IS NOT NULL AS prev FROM changes WHERE revision > ${start} ORDER BY revision
    `.execute(db);
    assert.deepEqual(
      rows.map((r) => `${r.type}:${r.object}:${r.prev}`),
      log.map((e) => `${e.type[0]}:false:${e.type !== 'ADDED'}`),
    );
  });

  it('returns exactly the written events after every revision, objects and previous states byte for byte', async () => {
    const end = log[log.length - 1].revision;
    for (let from = start; from <= end; from++) {
      assert.deepEqual(await readAll(changes, from), expectedAfter(log, from), `changes after ${from}`);
    }
  });

  it('returns exactly the written events of each scope: a resource, a namespace, one object', async () => {
    const end = log[log.length - 1].revision;
    for (let from = start; from <= end; from += 2) {
      assert.deepEqual(await readScope(changes, from, { tenant: 'default', resource: 'configmaps' }), expectedAfter(log, from, (e) => e.key.tenant === 'default'));
      assert.deepEqual(await readScope(changes, from, { tenant: 'default', resource: 'configmaps', namespace: NS }), expectedAfter(log, from, (e) => e.key.tenant === 'default' && e.key.namespace === NS));
      assert.deepEqual(await readScope(changes, from, { tenant: 'default', resource: 'configmaps', namespace: NS, name: 'a' }), expectedAfter(log, from, (e) => id(e.key) === `default/${NS}/a`));
      assert.deepEqual(await readScope(changes, from, { tenant: 'second', resource: 'configmaps', name: 'b' }), expectedAfter(log, from, (e) => e.key.tenant === 'second'));
    }
  });

  it('lists the exact state at every past revision', async () => {
    const end = log[log.length - 1].revision;
    for (let at = start; at <= end; at++) {
      const state = new Map<string, { body: Body; revision: number }>();
      for (const e of log.filter((x) => x.revision <= at && x.key.tenant === 'default')) {
        if (e.type === 'DELETED') state.delete(id(e.key));
        else state.set(id(e.key), { body: e.body, revision: e.revision });
      }
      const want = [...state.entries()].sort(([x], [y]) => (x < y ? -1 : 1)).map(([, s]) => withResourceVersion(s.body, s.revision));
      const got = await lists.list({ tenant: 'default', resource: 'configmaps', atRevision: at });
      const mine = got.items.filter((i) => i.key.namespace === NS || i.key.namespace === 'other');
      assert.deepEqual(
        mine.map((i) => i.body),
        want,
        `list at ${at}`,
      );
    }
  });

  it('still reads rows written before the migration, which carry their object', async () => {
    const before = await objects.currentRevision();
    const old = small('legacy', 'old-format');
    await db.transaction().execute(async (tx) => {
      const r = Number((await sql<{ value: number }>`UPDATE revision_counter SET value = value + 1 WHERE id = 1 RETURNING value`.execute(tx)).rows[0].value);
      await sql`INSERT INTO changes (revision, tenant, resource, namespace, name, type, object) VALUES (${r}, 'default', 'configmaps', ${NS}, 'legacy', 'A', ${JSON.stringify(old)}::jsonb)`.execute(tx);
    });
    assert.deepEqual(await readAll(changes, before), [{ revision: before + 1, key: key('legacy'), type: 'ADDED', object: withResourceVersion(old, before + 1), prevObject: null }]);
    log.push({ revision: before + 1, key: key('legacy'), type: 'ADDED', body: old, prev: null });
  });

  it('after compaction, every kept revision still returns exactly its events (states come from the changes that replaced them)', async () => {
    // Compact everything up to the middle of the history: the rows that held the replaced states of what remains stay.
    const middle = log[Math.floor(log.length / 2)].revision;
    await sql`UPDATE changes SET created_at = now() - interval '1 day' WHERE revision <= ${middle}`.execute(db);
    await changes.compact(new Date(Date.now() - 3_600_000), 1000);
    assert.equal(await changes.compactedRevision(), middle);
    const end = log[log.length - 1].revision;
    for (let from = middle; from <= end; from++) {
      assert.deepEqual(await readAll(changes, from), expectedAfter(log, from), `changes after ${from}`);
    }
  });
});
