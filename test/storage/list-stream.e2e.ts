import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { createDatabase, type DB, type ChunkSizing, type ListChunk, ObjectListRepository, ObjectStoreRepository } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

const key = (name: string) => ({ tenant: 'default', resource: 'configmaps', namespace: 'chunks', name });
const names = (chunks: ListChunk[]) => chunks.flatMap((c) => c.items.map((i) => i.key.name));

describe('ObjectListRepository.stream: a whole list in chunks at one revision', () => {
  let tdb: TestDatabase;
  let db: Kysely<DB>;
  let objects: ObjectStoreRepository;
  let lists: ObjectListRepository;
  const query = { tenant: 'default', resource: 'configmaps', namespace: 'chunks' };

  before(async () => {
    tdb = await createTestDatabase('list_stream');
    db = createDatabase({ connectionString: tdb.url });
    objects = new ObjectStoreRepository(db);
    lists = new ObjectListRepository(db);
    for (let i = 0; i < 10; i++) await objects.create(key(`o${i}`), { metadata: { name: `o${i}`, namespace: 'chunks' }, data: { i: String(i) } });
  });
  after(async () => {
    await db.destroy();
    await tdb.drop();
  });

  it('sizes chunks by the stored size of the rows read so far, and reads the same items as a whole list', async () => {
    const read = async (sizing: ChunkSizing) => {
      const chunks: ListChunk[] = [];
      for await (const c of lists.stream(query, sizing)) chunks.push(c);
      return chunks;
    };
    // A byte budget below one row's size: one row a chunk after the first; a full last chunk is confirmed by an empty read.
    const tiny = await read({ firstRows: 3, firstBytes: 1e9, bytes: 1, maxRows: 100 });
    assert.deepEqual(tiny.map((c) => c.rows), [3, 1, 1, 1, 1, 1, 1, 1, 0]);
    assert.ok(tiny.slice(0, -1).every((c) => c.bytes > 0));
    // A generous budget: capped by maxRows, and a short chunk ends the list without a further read.
    const capped = await read({ firstRows: 4, firstBytes: 1e9, bytes: 1e9, maxRows: 5 });
    assert.deepEqual(capped.map((c) => c.rows), [4, 5, 1]);
    // A first chunk asked for more rows than exist but capped by size: it keeps the rows before the one that
    // reaches the cap (at least one), and the stream goes on after them rather than ending short.
    const sized = await read({ firstRows: 100, firstBytes: 1, bytes: 1e9, maxRows: 100 });
    assert.deepEqual(sized.map((c) => c.rows), [1, 9]);
    const small = await read({ firstRows: 100, firstBytes: 1e9, bytes: 1e9, maxRows: 100 });
    assert.deepEqual(small.map((c) => c.rows), [10]);
    const whole = await lists.list(query);
    for (const chunks of [tiny, capped, sized, small]) {
      assert.deepEqual(names(chunks), whole.items.map((i) => i.key.name));
      assert.ok(chunks.every((c) => c.revision === whole.revision));
    }
  });

  it('shows the first chunk\'s snapshot in every later chunk, whatever is written between reads', async () => {
    const stream = lists.stream(query, { firstRows: 4, firstBytes: 1e9, bytes: 1e9, maxRows: 4 });
    const first = (await stream.next()).value as ListChunk;
    const revision = first.revision;
    // Between chunks: a key created, one deleted and one updated, all after the first chunk's range.
    await objects.create(key('o55'), { metadata: { name: 'o55', namespace: 'chunks' } });
    const o8 = await objects.get(key('o8'));
    await objects.delete(key('o8'), o8!.revision);
    const o9 = await objects.get(key('o9'));
    await objects.update(key('o9'), { metadata: { name: 'o9', namespace: 'chunks' }, data: { i: 'changed' } }, o9!.revision);
    const chunks = [first];
    for await (const c of stream) chunks.push(c);
    assert.deepEqual(names(chunks), ['o0', 'o1', 'o2', 'o3', 'o4', 'o5', 'o6', 'o7', 'o8', 'o9']);
    assert.ok(chunks.every((c) => c.revision === revision));
    const o9Seen = chunks.flatMap((c) => c.items).find((i) => i.key.name === 'o9');
    assert.deepEqual(o9Seen?.body.data, { i: '9' });
    const now = await lists.list(query);
    assert.deepEqual(now.items.map((i) => i.key.name), ['o0', 'o1', 'o2', 'o3', 'o4', 'o5', 'o55', 'o6', 'o7', 'o9']);
  });

  it('applies the filter per chunk and still counts the rows read', async () => {
    const chunks: ListChunk[] = [];
    for await (const c of lists.stream({ ...query, filter: (b) => (b.metadata as { name: string }).name.endsWith('5') }, { firstRows: 3, firstBytes: 1e9, bytes: 1e9, maxRows: 3 })) chunks.push(c);
    assert.deepEqual(names(chunks), ['o5', 'o55']);
    assert.equal(chunks.reduce((n, c) => n + c.rows, 0), 10);
  });
});
