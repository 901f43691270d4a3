import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import { migrations } from '../../../migrations/index.js';
import { checkPostgresVersion } from './server-version.js';

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

/**
 * Brings the schema up to date. Safe to call from several processes at once:
 * Kysely takes a lock. Throws UnsupportedPostgresError, before touching
 * anything, on a PostgreSQL older than MIN_POSTGRES_MAJOR; otherwise the
 * first migration error. Returns the names of the migrations it applied.
 */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  await checkPostgresVersion(db);
  const migrator = new Migrator({ db, provider: new StaticMigrationProvider() });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
