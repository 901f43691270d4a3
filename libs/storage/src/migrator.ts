import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import { checkPostgresVersion } from './server-version.js';

/**
 * The schema's migrations by name (names sort in the order they run). They
 * live outside the package, in the repository's migrations/ folder (its
 * index exports them as `migrations`); whoever migrates passes them in.
 */
export type SchemaMigrations = Record<string, Migration>;

class StaticMigrationProvider implements MigrationProvider {
  constructor(private readonly migrations: SchemaMigrations) {}

  async getMigrations(): Promise<SchemaMigrations> {
    return this.migrations;
  }
}

/**
 * Brings the schema up to date. Safe to call from several processes at once:
 * Kysely takes a lock. Throws UnsupportedPostgresError, before touching
 * anything, on a PostgreSQL older than MIN_POSTGRES_MAJOR; otherwise the
 * first migration error. Returns the names of the migrations it applied.
 * `migrations`: the schema's (migrations/index.ts exports them).
 */
export async function migrateToLatest(db: Kysely<any>, migrations: SchemaMigrations): Promise<string[]> {
  await checkPostgresVersion(db);
  const migrator = new Migrator({ db, provider: new StaticMigrationProvider(migrations) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
