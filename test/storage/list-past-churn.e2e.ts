import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import {
  ChangeLogRepository,
  createDatabase,
  type DB,
  type ListCursor,
  type ListQuery,
  type ObjectKey,
  ObjectListRepository,
  ObjectStoreRepository,
  StorageError,
  TenantRepository,
  withResourceVersion,
} from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

type Body = Record<string, unknown>;
interface Stored {
  key: ObjectKey;
  body: Body;
  revision: number;
}

const T = 'default';
const R = 'configmaps';
const id = (k: ObjectKey) => `${k.tenant}\u0000${k.namespace}\u0000${k.name}`;
const key = (namespace: string, name: string, tenant = T): ObjectKey => ({ tenant, resource: R, namespace, name });
const body = (k: ObjectKey, tag: string, app: string): Body => ({ metadata: { name: k.name, namespace: k.namespace, labels: { app } }, data: { tag } });

/**
 * A list at a past revision reads the keys changed since from the change log:
 * with few changes since, all of them sorted by key; with many, a name-ordered
 * index from the page's cursor (migration 0013), and the unchanged keys only up
 * to the last changed key of the page. The second repository below takes that
 * by-name read from the first change on, so both reads are checked against the
 * state replayed from the writes, page by page.
 */
describe('pages at a past revision after churn: both reads of the changed keys give the exact state', () => {
  let tdb: TestDatabase;
  let db: Kysely<DB>;
  let objects: ObjectStoreRepository;
  let changes: ChangeLogRepository;
  let bySort: ObjectListRepository;
  let byName: ObjectListRepository;
  const current = new Map<string, Stored>();
  /** The state after each revision written by this test. */
  const states = new Map<number, Map<string, Stored>>();
  let start = 0;

  const record = (revision: number) => states.set(revision, new Map(current));
  async function create(k: ObjectKey, tag: string, app = 'x'): Promise<void> {
    const b = body(k, tag, app);
    const s = await objects.create(k, b);
    current.set(id(k), { key: k, body: b, revision: s.revision });
    record(s.revision);
  }
  async function update(k: ObjectKey, tag: string, app = 'x'): Promise<void> {
    const b = body(k, tag, app);
    const s = await objects.update(k, b, current.get(id(k))!.revision);
    current.set(id(k), { key: k, body: b, revision: s.revision });
    record(s.revision);
  }
  async function remove(k: ObjectKey): Promise<void> {
    const s = await objects.delete(k, current.get(id(k))!.revision);
    current.delete(id(k));
    record(s.revision);
  }
  const names = (n: number) => Array.from({ length: n }, (_, i) => `k${String(i).padStart(2, '0')}`);

  /** The state at `at` of the list `q` (namespace, label app), in key order. */
  function expected(at: number, q: Pick<ListQuery, 'namespace' | 'labelRequirements'>): Stored[] {
    const revs = [...states.keys()].filter((r) => r <= at);
    const state = revs.length ? states.get(Math.max(...revs))! : new Map<string, Stored>();
    const app = q.labelRequirements?.[0]?.values[0];
    return [...state.values()]
      .filter((s) => s.key.tenant === T && (q.namespace === undefined || s.key.namespace === q.namespace))
      .filter((s) => app === undefined || (s.body.metadata as { labels: { app: string } }).labels.app === app)
      .sort((a, b) => (a.key.namespace === b.key.namespace ? (a.key.name < b.key.name ? -1 : 1) : a.key.namespace < b.key.namespace ? -1 : 1));
  }

  /** Pages through the list at `at` with `limit`, checking each page's items and remainingItemCount against the state. */
  async function pageThrough(lists: ObjectListRepository, at: number, limit: number, q: Pick<ListQuery, 'namespace' | 'labelRequirements'>, label: string): Promise<void> {
    const want = expected(at, q);
    const got: Stored[] = [];
    let cursor: ListCursor | undefined;
    for (let page = 0; page < 200; page++) {
      const res = await lists.list({ tenant: T, resource: R, ...q, limit, after: cursor, atRevision: at, countRemaining: !q.labelRequirements });
      assert.equal(res.revision, at, `${label}: revision`);
      got.push(...res.items.map((i) => ({ key: i.key, body: i.body, revision: i.revision })));
      if (res.remaining !== undefined) assert.equal(res.remaining, want.length - got.length, `${label}: remaining after page ${page}`);
      if (!res.next) break;
      assert.equal(res.items.length, limit, `${label}: a page that is not the last is full`);
      cursor = res.next;
    }
    assert.deepEqual(
      got.map((s) => [s.key.namespace, s.key.name, s.revision, s.body]),
      want.map((s) => [s.key.namespace, s.key.name, s.revision, withResourceVersion(s.body, s.revision)]),
      label,
    );
  }

  before(async () => {
    tdb = await createTestDatabase('list_past_churn');
    db = createDatabase({ connectionString: tdb.url, maxConnections: 4 });
    objects = new ObjectStoreRepository(db);
    changes = new ChangeLogRepository(db);
    bySort = new ObjectListRepository(db);
    byName = new ObjectListRepository(db, { byNameThreshold: 1 });
    await new TenantRepository(db).ensure('other');
    start = await objects.currentRevision();
    record(start);
    for (const ns of ['n1', 'n2']) for (const n of names(16)) await create(key(ns, n), `${ns}-${n}-1`);
    // The same names in another tenant change too: neither read may pick them up.
    for (const n of names(4)) await create(key('n1', n, 'other'), 'other');
    // A run of consecutive changed keys that page boundaries fall into, labels flipping on some.
    for (const n of names(12).slice(2)) await update(key('n1', n), `n1-${n}-2`, n === 'k04' || n === 'k09' ? 'y' : 'x');
    await update(key('n1', 'k01', 'other'), 'other-2');
    // Deletes, a re-create of a deleted name, objects created after the earlier revisions (between and after old names).
    await remove(key('n1', 'k05'));
    await remove(key('n1', 'k06'));
    await create(key('n1', 'k05'), 'n1-k05-again', 'y');
    await create(key('n1', 'k06a'), 'n1-k06a');
    await create(key('n1', 'k99'), 'n1-k99');
    await update(key('n1', 'k05'), 'n1-k05-again-2');
    // A run across the namespace boundary of an all-namespaces list: the end of n1, all of n2.
    for (const n of names(16).slice(12)) await update(key('n1', n), `n1-${n}-3`);
    for (const n of names(16)) await update(key('n2', n), `n2-${n}-2`, n === 'k00' ? 'y' : 'x');
    await remove(key('n2', 'k15'));
    await create(key('n2', 'k15'), 'n2-k15-again');
    await remove(key('n2', 'k00'));
    await create(key('n3', 'k00'), 'n3-k00');
    await update(key('n1', 'k03'), 'n1-k03-4', 'y');
  });
  after(async () => {
    await db.destroy();
    await tdb.drop();
  });

  it('pages one namespace and all namespaces at past revisions exactly, with either read', async () => {
    const end = await objects.currentRevision();
    for (let at = start; at <= end; at += at < start + 36 ? 9 : 3) {
      for (const [lists, how] of [
        [bySort, 'sorted'],
        [byName, 'by name'],
      ] as const) {
        for (const limit of [2, 5]) {
          await pageThrough(lists, at, limit, { namespace: 'n1' }, `${how}, n1 at ${at}, limit ${limit}`);
          await pageThrough(lists, at, limit, {}, `${how}, all namespaces at ${at}, limit ${limit}`);
        }
      }
    }
  });

  it('applies label selectors to the state at the past revision, not the newest', async () => {
    const end = await objects.currentRevision();
    const labelled = { labelRequirements: [{ key: 'app', operator: 'Equals', values: ['y'] }] };
    for (let at = start + 36; at <= end; at += 4) {
      for (const lists of [bySort, byName]) {
        await pageThrough(lists, at, 2, { namespace: 'n1', ...labelled }, `app=y in n1 at ${at}`);
        await pageThrough(lists, at, 1, labelled, `app=y everywhere at ${at}`);
      }
    }
  });

  it('counts remainingItemCount exactly while few changes followed the revision, and leaves it out after many', async () => {
    const at = start + 32;
    const first = await bySort.list({ tenant: T, resource: R, namespace: 'n1', limit: 3, atRevision: at, countRemaining: true });
    assert.equal(first.remaining, expected(at, { namespace: 'n1' }).length - 3);
    const churned = await byName.list({ tenant: T, resource: R, namespace: 'n1', limit: 3, atRevision: at, countRemaining: true });
    assert.deepEqual(churned.items, first.items);
    assert.equal(churned.remaining, undefined);
  });

  it('answers Expired below the compacted revision and the exact state above it, with either read', async () => {
    const middle = start + 40;
    await sql`UPDATE changes SET created_at = now() - interval '1 day' WHERE revision <= ${middle}`.execute(db);
    await changes.compact(new Date(Date.now() - 3_600_000), 1000);
    assert.equal(await changes.compactedRevision(), middle);
    const end = await objects.currentRevision();
    for (const lists of [bySort, byName]) {
      await assert.rejects(
        lists.list({ tenant: T, resource: R, namespace: 'n1', limit: 2, atRevision: middle - 1 }),
        (e: unknown) => e instanceof StorageError && e.code === 'Expired',
      );
      for (let at = middle; at <= end; at += 5) {
        await pageThrough(lists, at, 3, { namespace: 'n1' }, `after compaction, n1 at ${at}`);
        await pageThrough(lists, at, 4, {}, `after compaction, all namespaces at ${at}`);
      }
    }
  });
});
