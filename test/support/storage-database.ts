import { after, before } from 'node:test';
import type { Kysely } from 'kysely';
import { createDatabase, type DB } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from './test-database.js';

/** What {@link useStorageDatabase} gives a describe block; read only from its hooks and tests. */
export interface StorageDatabase {
  /** The pooled handle (createDatabase's: the platform's role). */
  readonly db: Kysely<DB>;
  /** The database it is on. */
  readonly tdb: TestDatabase;
}

/**
 * Registers, in the calling describe block, a fresh test database and a
 * pooled handle on it with `maxConnections` connections before its tests,
 * and their end (handle destroyed, database dropped) after them.
 */
export function useStorageDatabase(label: string, maxConnections = 4): StorageDatabase {
  let tdb: TestDatabase | undefined;
  let db: Kysely<DB> | undefined;
  before(async () => {
    tdb = await createTestDatabase(label);
    db = createDatabase({ connectionString: tdb.url, maxConnections });
  });
  after(async () => {
    await db?.destroy();
    await tdb?.drop();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useStorageDatabase: read before its before() hook ran');
    return value;
  };
  return {
    get db() {
      return ready(db);
    },
    get tdb() {
      return ready(tdb);
    },
  };
}
