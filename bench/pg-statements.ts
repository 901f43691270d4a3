import pg from 'pg';

// BENCH_PG_STATEMENTS=1: PostgreSQL's own account of where its time goes in a phase, from pg_stat_statements
// (planning included, nested statements of the write functions included), per request of the phase.

/** Whether the benchmark reads pg_stat_statements (BENCH_PG_STATEMENTS=1). */
export const PG_STATEMENTS = process.env.BENCH_PG_STATEMENTS === '1';

/** Server settings that load pg_stat_statements and have it time planning and nested statements, when asked for. */
export function pgStatementsFlags(): string[] {
  return PG_STATEMENTS ? ['-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track=all', '-c', 'pg_stat_statements.track_planning=on'] : [];
}

/** One statement's share of a phase, per request of the phase. */
export interface StatementCost {
  text: string;
  callsPerOp: number;
  execUsPerOp: number;
  planUsPerOp: number;
}

/** Clears the statistics so that the next read covers one phase (creates the extension the first time). No-op unless asked for. */
export async function resetStatements(url: string): Promise<void> {
  if (!PG_STATEMENTS) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await client.query('SELECT pg_stat_statements_reset()');
  } finally {
    await client.end();
  }
}

/** The `n` statements that took PostgreSQL the most time (execution + planning) since the reset, per each of `ops` requests; undefined unless asked for. */
export async function topStatements(url: string, ops: number, n = 10): Promise<StatementCost[] | undefined> {
  if (!PG_STATEMENTS) return undefined;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ calls: string; exec: number; plan: number; text: string }>(
      `SELECT calls, total_exec_time AS exec, total_plan_time AS plan, left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS text
       FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time + total_plan_time DESC LIMIT $1`,
      [n],
    );
    const per = Math.max(1, ops);
    return rows.map((r) => ({ text: r.text, callsPerOp: Number(r.calls) / per, execUsPerOp: (r.exec * 1000) / per, planUsPerOp: (r.plan * 1000) / per }));
  } finally {
    await client.end();
  }
}

/** Prints a phase's top statements (nested ones are also inside their callers' time). */
export function printStatements(phase: string, top: StatementCost[] | undefined): void {
  if (!top) return;
  console.log(`\nPostgreSQL per ${phase} (pg_stat_statements; a nested statement's time is also in its caller's): exec µs, plan µs, calls`);
  for (const s of top) console.log(`  ${s.execUsPerOp.toFixed(1).padStart(7)} ${s.planUsPerOp.toFixed(1).padStart(6)} ${s.callsPerOp.toFixed(3).padStart(7)}  ${s.text}`);
}
