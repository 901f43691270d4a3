import { sql } from 'kysely';
import type { Database } from './db.js';

/**
 * Resolves true when PostgreSQL answers a trivial query within `timeoutMs`,
 * false on any error or on timeout (the query is abandoned, not cancelled).
 * Never throws; used by readiness checks.
 */
export async function probeDatabase(db: Database, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      sql`SELECT 1`.execute(db),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
      }),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
