import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { ChangeLogRepository, createDatabase, type DB, ObjectStoreRepository, isStorageError } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

class IntentionalRollback extends Error {}

interface Committed {
  revision: number;
  name: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
}

const WRITERS = 20;
const ROUNDS = 5;
const ROUND_MS = 2500;
/** A round goes on past ROUND_MS (on a loaded machine) until it has this many commits to check, up to MAX_ROUND_MS. */
const MIN_COMMITS = 101;
const MAX_ROUND_MS = 60_000;

/**
 * One writer: creates, updates and deletes its own objects in a loop; about
 * one transaction in four is rolled back on purpose after its write. Records
 * the revisions of the writes that committed. Runs until `until`, and
 * beyond it while the round has fewer than MIN_COMMITS commits.
 */
async function writer(db: Kysely<DB>, objects: ObjectStoreRepository, id: number, until: number, out: Committed[]): Promise<number> {
  let rollbacks = 0;
  let i = 0;
  const hardStop = until - ROUND_MS + MAX_ROUND_MS;
  while (Date.now() < until || (out.length < MIN_COMMITS && Date.now() < hardStop)) {
    const name = `w${id}-o${i % 5}`;
    const k = { tenant: 'default', resource: 'configmaps', namespace: 'race', name };
    const rollback = Math.random() < 0.25;
    let recorded: Committed | undefined;
    try {
      await db.transaction().execute(async (tx) => {
        const cur = await objects.get(k, tx);
        const body = { metadata: { name, namespace: 'race' }, data: { i: String(i) } };
        if (!cur) {
          const c = await objects.create(k, body, tx);
          recorded = { revision: c.revision, name, type: 'ADDED' };
        } else if (i % 3 === 0) {
          const d = await objects.delete(k, cur.revision, tx);
          recorded = { revision: d.revision, name, type: 'DELETED' };
        } else {
          const u = await objects.update(k, body, cur.revision, tx);
          recorded = { revision: u.revision, name, type: 'MODIFIED' };
        }
        // Hold the transaction open a moment so commits interleave.
        if (Math.random() < 0.3) await new Promise((r) => setTimeout(r, Math.random() * 3));
        if (rollback) throw new IntentionalRollback();
      });
      if (recorded) out.push(recorded);
    } catch (err) {
      if (err instanceof IntentionalRollback) rollbacks++;
      else if (!isStorageError(err)) throw err;
    }
    i++;
  }
  return rollbacks;
}

describe('revision allocator under concurrent writers', () => {
  let tdb: TestDatabase;
  let db: Kysely<DB>;

  before(async () => {
    tdb = await createTestDatabase('allocator');
    db = createDatabase({ connectionString: tdb.url, maxConnections: WRITERS + 4 });
  });
  after(async () => {
    await db.destroy();
    await tdb.drop();
  });

  for (let round = 1; round <= ROUNDS; round++) {
    it(`round ${round}: a follower sees exactly the committed changes, contiguous and in order`, async () => {
      const objects = new ObjectStoreRepository(db);
      const changes = new ChangeLogRepository(db);
      const start = await objects.currentRevision();
      const until = Date.now() + ROUND_MS;
      const committed: Committed[] = [];
      const seen: Committed[] = [];
      let done = false;
      const follower = (async () => {
        let last = start;
        for (;;) {
          // Read `done` before the batch: an empty batch only proves the end if
          // every writer had already finished when it was read.
          const finished = done;
          const batch = await changes.changesAfter(last, 500);
          for (const ev of batch) {
            // Each batch must continue exactly where the last one ended: a hole or
            // a reordering would show here even if it healed later.
            assert.equal(ev.revision, last + 1, `follower saw revision ${ev.revision} right after ${last}`);
            last = ev.revision;
            seen.push({ revision: ev.revision, name: ev.key.name, type: ev.type });
          }
          if (finished && batch.length === 0) return;
          if (batch.length === 0) await new Promise((r) => setTimeout(r, 2));
        }
      })();
      const rollbacks = await Promise.all(Array.from({ length: WRITERS }, (_, id) => writer(db, objects, id, until, committed)));
      done = true;
      await follower;
      committed.sort((a, b) => a.revision - b.revision);
      assert.ok(committed.length >= MIN_COMMITS, `only ${committed.length} commits`);
      assert.ok(rollbacks.reduce((a, b) => a + b, 0) > 10, 'too few rollbacks to test anything');
      assert.deepEqual(seen, committed);
      assert.equal(seen[0].revision, start + 1);
      assert.equal(seen[seen.length - 1].revision, await objects.currentRevision());
    });
  }
});
