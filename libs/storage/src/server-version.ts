import { type Kysely, sql } from 'kysely';

/**
 * The oldest PostgreSQL major version Plinth runs on: 15, Debian 12's and
 * the oldest the PostgreSQL project still supports (14 reached its end of
 * life in November 2026). The storage suites run on it and on the embedded
 * 17 (test/run-tests.mjs).
 */
export const MIN_POSTGRES_MAJOR = 15;

/** Thrown when the server is older than {@link MIN_POSTGRES_MAJOR}: Plinth refuses to migrate or serve on it. */
export class UnsupportedPostgresError extends Error {
  constructor(
    /** The server's `server_version`, e.g. `14.13 (Debian 14.13-1)`. */
    readonly version: string,
    /** Its `server_version_num`, e.g. 140013. */
    readonly versionNum: number,
    /** The oldest major version Plinth runs on ({@link MIN_POSTGRES_MAJOR}). */
    readonly minimum: number = MIN_POSTGRES_MAJOR,
  ) {
    super(`PostgreSQL ${version} is too old: Plinth needs PostgreSQL ${minimum} or later`);
    this.name = 'UnsupportedPostgresError';
  }
}

/** Throws UnsupportedPostgresError when `versionNum` (server_version_num) is below {@link MIN_POSTGRES_MAJOR}. Pure. */
export function assertSupportedPostgres(version: string, versionNum: number): void {
  if (!(versionNum >= MIN_POSTGRES_MAJOR * 10000)) throw new UnsupportedPostgresError(version, versionNum);
}

/** The server's version (`server_version`, `server_version_num`); throws UnsupportedPostgresError when it is too old. */
export async function checkPostgresVersion(db: Kysely<any>): Promise<{ version: string; versionNum: number }> {
  const { rows } = await sql<{ version: string; num: string }>`SELECT current_setting('server_version') AS version, current_setting('server_version_num') AS num`.execute(db);
  const found = { version: rows[0].version, versionNum: Number(rows[0].num) };
  assertSupportedPostgres(found.version, found.versionNum);
  return found;
}
