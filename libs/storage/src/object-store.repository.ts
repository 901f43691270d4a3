import { type Kysely, sql } from 'kysely';
import type { DB } from './db.js';
import { type ObjectKey, type StoredObject, withResourceVersion, withoutResourceVersion } from './object-key.js';
import { StorageError } from './storage-error.js';

interface PgError {
  code?: string;
}

function mapWriteError(err: unknown, key: ObjectKey): never {
  const code = (err as PgError)?.code;
  if (code === 'P0409') throw new StorageError('AlreadyExists', `${key.resource} "${key.name}" already exists`);
  if (code === 'P0404') throw new StorageError('NotFound', `${key.resource} "${key.name}" not found`);
  if (code === 'P0412') throw new StorageError('Conflict', `${key.resource} "${key.name}" has been modified`);
  throw err;
}

/**
 * Reads and writes current objects. Every write is one statement (a call of
 * a function from the initial migration) that also appends to the change
 * log and NOTIFYs, so it commits atomically with its revision. Writes may be
 * passed a transaction as `db` (tests roll some back on purpose).
 */
export class ObjectStoreRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Returns the object, or undefined when it does not exist. */
  async get(key: ObjectKey, db: Kysely<DB> = this.db): Promise<StoredObject | undefined> {
    const row = await db
      .selectFrom('objects')
      .select(['revision', 'body'])
      .where('tenant', '=', key.tenant)
      .where('resource', '=', key.resource)
      .where('namespace', '=', key.namespace)
      .where('name', '=', key.name)
      .executeTakeFirst();
    return row ? { key, revision: row.revision, body: withResourceVersion(row.body, row.revision) } : undefined;
  }

  /** Inserts a new object. Throws StorageError AlreadyExists. Does not mutate `body`. */
  async create(key: ObjectKey, body: Record<string, unknown>, db: Kysely<DB> = this.db): Promise<StoredObject> {
    const stored = withoutResourceVersion(body);
    try {
      const { rows } = await sql<{ r: number }>`
        SELECT plinth_create(${key.tenant}, ${key.resource}, ${key.namespace}, ${key.name}, ${JSON.stringify(stored)}::jsonb) AS r
      `.execute(db);
      return { key, revision: rows[0].r, body: withResourceVersion(stored, rows[0].r) };
    } catch (err) {
      mapWriteError(err, key);
    }
  }

  /**
   * Replaces the object if its revision is still `expectedRevision` (null:
   * whatever it is). Throws StorageError NotFound or Conflict.
   */
  async update(
    key: ObjectKey,
    body: Record<string, unknown>,
    expectedRevision: number | null,
    db: Kysely<DB> = this.db,
  ): Promise<StoredObject> {
    const stored = withoutResourceVersion(body);
    try {
      const { rows } = await sql<{ r: number }>`
        SELECT plinth_update(${key.tenant}, ${key.resource}, ${key.namespace}, ${key.name},
                             ${JSON.stringify(stored)}::jsonb, ${expectedRevision}::bigint) AS r
      `.execute(db);
      return { key, revision: rows[0].r, body: withResourceVersion(stored, rows[0].r) };
    } catch (err) {
      mapWriteError(err, key);
    }
  }

  /**
   * Removes the object if its revision is still `expectedRevision` (null:
   * whatever it is). Returns its last state stamped with the deletion's
   * revision. Throws StorageError NotFound or Conflict.
   */
  async delete(key: ObjectKey, expectedRevision: number | null, db: Kysely<DB> = this.db): Promise<StoredObject> {
    try {
      const { rows } = await sql<{ revision: number; body: Record<string, unknown> }>`
        SELECT * FROM plinth_delete(${key.tenant}, ${key.resource}, ${key.namespace}, ${key.name}, ${expectedRevision}::bigint)
      `.execute(db);
      return { key, revision: rows[0].revision, body: withResourceVersion(rows[0].body, rows[0].revision) };
    } catch (err) {
      mapWriteError(err, key);
    }
  }

  /** The newest committed revision. */
  async currentRevision(db: Kysely<DB> = this.db): Promise<number> {
    const row = await db.selectFrom('revision_counter').select('value').executeTakeFirstOrThrow();
    return row.value;
  }

  /** Counts the objects of a resource in a namespace ('' counts cluster-wide for namespaced kinds is not meant). */
  async countInNamespace(tenant: string, namespace: string): Promise<number> {
    const row = await this.db
      .selectFrom('objects')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant', '=', tenant)
      .where('namespace', '=', namespace)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The distinct resources that have objects in a namespace, for namespace deletion. */
  async resourcesInNamespace(tenant: string, namespace: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('objects')
      .select('resource')
      .distinct()
      .where('tenant', '=', tenant)
      .where('namespace', '=', namespace)
      .execute();
    return rows.map((r) => r.resource);
  }
}
