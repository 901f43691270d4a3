import { loadavg } from 'node:os';
import { execSync } from 'node:child_process';
import pg from 'pg';
import { type Agent, request } from 'undici';
import { benchAgent, progress, runBenchmark, settleWatchCache, startBenchPostgres, startServerProcess, stopServerAndDatabase, watchFor } from './bench-support.js';

// Label-selected watch catch-up (issue 29, goal 4): a watch with labelSelector=app=needle resumed from a revision
// DEPTH changes back, where 10 of those changes match, against the same watch without a selector (every change),
// at 50,000 and 1,000,000 changes back; and what the change log's label index (migration 0018) costs per change.
// The history is loaded with bulk INSERT … SELECT generate_series statements (objects and change rows as the write
// functions store them, the label trigger filling each change's labels), not through the API: a million API
// writes would take the better part of an hour on this machine. Figures on stdout, progress on stderr.

const DEPTHS = (process.env.BENCH_LABEL_DEPTHS ?? '50000,1000000').split(',').map(Number);
const MATCHING = 10;
const RUNS = 2;

/**
 * Commits `n` creates of ConfigMaps `w-<i>` in `namespace` at contiguous revisions after the counter, in one
 * transaction, as n committed writes would leave them (the object row at its revision, a change row without a
 * copy of the body), `MATCHING` of them spread evenly labelled app=needle, the rest app=hay; moves the counter and
 * wakes the change feeds. Returns the revision before them and the milliseconds the change rows took to insert.
 */
async function appendChanges(pool: pg.Pool, namespace: string, n: number, matching: number): Promise<{ from: number; changesMs: number }> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const from = Number((await c.query('SELECT value FROM revision_counter WHERE id = 1 FOR UPDATE')).rows[0].value);
    const every = matching > 0 ? Math.floor(n / matching) : 0;
    await c.query(
      `INSERT INTO objects (tenant, resource, namespace, name, revision, body)
       SELECT 'default', 'configmaps', $2, 'w-' || i, $1 + i,
         jsonb_build_object('apiVersion', 'v1', 'kind', 'ConfigMap', 'metadata', jsonb_build_object('name', 'w-' || i, 'namespace', $2::text,
           'labels', jsonb_build_object('app', CASE WHEN $4 > 0 AND i % $4 = 0 THEN 'needle' ELSE 'hay' END, 'tier', 'web')),
           'data', jsonb_build_object('v', repeat('x', 100)))
       FROM generate_series(1, $3) AS i`,
      [from, namespace, n, every],
    );
    const t0 = process.hrtime.bigint();
    await c.query(
      `INSERT INTO changes (revision, tenant, resource, namespace, name, type)
       SELECT $1 + i, 'default', 'configmaps', $2, 'w-' || i, 'A' FROM generate_series(1, $3) AS i`,
      [from, namespace, n],
    );
    const changesMs = Number(process.hrtime.bigint() - t0) / 1e6;
    await c.query('UPDATE revision_counter SET value = value + $1 WHERE id = 1', [n]);
    await c.query("SELECT pg_notify('plinth_changes', $1)", [String(from + n)]);
    await c.query('COMMIT');
    return { from, changesMs };
  } finally {
    c.release();
  }
}

/** Bytes per change of the label column and of the GIN index, over the whole change log. */
async function indexBytes(pool: pg.Pool): Promise<{ columnBytes: number; indexBytes: number; changes: number }> {
  const { rows } = await pool.query(
    `SELECT count(*)::float8 AS n, coalesce(avg(pg_column_size(labels)), 0)::float8 AS col, pg_relation_size('changes_labels_idx')::float8 AS idx FROM changes`,
  );
  return { columnBytes: rows[0].col, indexBytes: rows[0].idx / Math.max(1, rows[0].n), changes: rows[0].n };
}

/** Milliseconds per change of inserting `n` change rows with the label trigger on, and with it off (scratch rows of another resource, removed after). */
async function writeCost(pool: pg.Pool, n: number): Promise<{ withMs: number; withoutMs: number }> {
  const on = await appendChanges(pool, 'cost-on', n, 0);
  const c = await pool.connect();
  try {
    await c.query('ALTER TABLE changes DISABLE TRIGGER changes_labels');
    const off = await appendChanges(pool, 'cost-off', n, 0);
    return { withMs: on.changesMs / n, withoutMs: off.changesMs / n };
  } finally {
    await c.query('ALTER TABLE changes ENABLE TRIGGER changes_labels');
    c.release();
  }
}

async function main(): Promise<void> {
  const commit = execSync('git rev-parse --short HEAD').toString().trim();
  const db = await startBenchPostgres('watch-labels', 58000 + (process.pid % 400));
  const port = 19000 + (process.pid % 400);
  const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '8' }, port);
  const base = `https://127.0.0.1:${port}`;
  const agent = await benchAgent({ connections: 4, bodyTimeout: 0 });
  const pool = new pg.Pool({ connectionString: db.url, max: 4 });
  const lines: string[] = [];
  try {
    for (const depth of DEPTHS) {
      const ns = `d${depth}`;
      await (await request(`${base}/api/v1/namespaces`, { method: 'POST', body: JSON.stringify({ metadata: { name: ns } }), headers: { 'content-type': 'application/json' }, dispatcher: agent })).body.text();
      progress(`loading ${depth.toLocaleString('en-US')} changes into namespace ${ns} (bulk INSERT … SELECT generate_series; ${MATCHING} labelled app=needle)`);
      const { from, changesMs } = await appendChanges(pool, ns, depth, MATCHING);
      progress(`  change rows inserted in ${(changesMs / 1000).toFixed(1)} s; waiting for the server's change feed to digest them`);
      await settleWatchCache(base, agent, pool);
      const full: number[] = [];
      const selective: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        progress(`  run ${run + 1}: full catch-up (${depth.toLocaleString('en-US')} events), then labelSelector=app=needle (${MATCHING} events)`);
        const f = await watchFor(base, agent, `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${from}`, depth);
        const s = await watchFor(base, agent, `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${from}&labelSelector=app%3Dneedle`, MATCHING);
        if (f.events !== depth || s.events !== MATCHING) throw new Error(`catch-up delivered ${f.events} and ${s.events} events`);
        full.push(f.ms);
        selective.push(s.ms);
      }
      const fMin = Math.min(...full);
      const sMin = Math.min(...selective);
      lines.push(
        `${depth.toLocaleString('en-US').padStart(9)} changes back: full ${full.map((x) => x.toFixed(0)).join(' / ')} ms, labelSelector (10 match) ${selective.map((x) => x.toFixed(0)).join(' / ')} ms; ratio ${(sMin / fMin).toFixed(3)} (goal <= 0.1)`,
      );
    }
    progress('index cost per change: bytes, and insert time with the label trigger on and off (50,000 scratch changes each)');
    const bytes = await indexBytes(pool);
    const cost = await writeCost(pool, 50_000);
    console.log(`\nlabel-selected watch catch-up (commit ${commit}, ${new Date().toISOString().slice(0, 10)}, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}; one replica, durable PostgreSQL, min of ${RUNS} runs for the ratio)\n`);
    for (const l of lines) console.log(l);
    console.log(`\nlabel index cost per change (${bytes.changes.toLocaleString('en-US')} changes, labels {app, tier}): column ${bytes.columnBytes.toFixed(0)} B + GIN index ${bytes.indexBytes.toFixed(1)} B;`);
    console.log(`insert of a change row ${(cost.withMs * 1000).toFixed(1)} µs with the label trigger and index, ${(cost.withoutMs * 1000).toFixed(1)} µs without the trigger (bulk, one statement): +${((cost.withMs - cost.withoutMs) * 1000).toFixed(1)} µs per change`);
  } finally {
    await pool.end();
    await agent.close();
    await stopServerAndDatabase(server, db);
  }
}

runBenchmark(main);
