import { sql } from 'kysely';
import type { Database } from './db.js';

/**
 * Resolves true when PostgreSQL answers a trivial query within `timeoutMs`,
 * false on any error or on timeout (the query is abandoned, not cancelled).
 * Never throws; used by readiness checks.
 */
export function probeDatabase(db: Database, timeoutMs = 2000): Promise<boolean> {
  return settlesWithin(() => sql`SELECT 1`.execute(db), timeoutMs);
}

/**
 * True when the promise `start` makes resolves within `timeoutMs`; false when it rejects or is not done by then
 * (it is abandoned, not cancelled). Never throws.
 */
export async function settlesWithin(start: () => Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      start(),
      new Promise<never>((_, reject) => {
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
