import { type Agent, request } from 'undici';
import pg from 'pg';
import { encodeContinue } from '../apps/api/src/handlers/continue-token.js';
import { benchAgent, percentiles, progress, runBenchmark, settleWatchCache, startBenchPostgres, startServerProcess, stopServerAndDatabase, watchFor } from './bench-support.js';

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 1_000_000);
const PAGES = Number(process.env.BENCH_PAGES ?? 40);
/** Changes of another tenant written between a watch's resourceVersion and now (catch-up must skip them by index). */
const FOREIGN_CHANGES = Number(process.env.BENCH_FOREIGN_CHANGES ?? 1_000_000);
/** Changes of the watched resource itself, for the unselective catch-up rate. */
const OWN_CHANGES = Number(process.env.BENCH_OWN_CHANGES ?? 200_000);
/** Objects of the paged namespace updated after the first page of a paged list (its continue pages read the past). */
const UPDATED_SINCE = Number(process.env.BENCH_UPDATED_SINCE ?? 100_000);
/** Rounds of a first page then, 1 s later, a continue page at its revision (issue 46: 15-25x slower on Debian's PostgreSQL 15). */
const FIRST_VS_CONTINUE_ROUNDS = Number(process.env.BENCH_FIRST_VS_CONTINUE ?? 5);

/** The change rows of the creates {@link appendChanges} commits, with and without a copy of the body. */
const sql = {
  noCopyCreate: `INSERT INTO changes (revision, tenant, resource, namespace, name, type)
    SELECT $1 + i, $2, 'configmaps', $3, 'w-' || i, 'A' FROM generate_series(1, $4) AS i`,
  copyCreate: `INSERT INTO changes (revision, tenant, resource, namespace, name, type, object)
    SELECT c.revision, c.tenant, c.resource, c.namespace, c.name, 'A', o.body
    FROM (SELECT $1 + i AS revision, $2::text AS tenant, 'configmaps' AS resource, $3::text AS namespace, 'w-' || i AS name FROM generate_series(1, $4) AS i) c
    JOIN objects o ON o.tenant = c.tenant AND o.resource = c.resource AND o.namespace = c.namespace AND o.name = c.name`,
};

/** True when change rows must hold the new state (the schema before migration 0010: `object` NOT NULL). */
async function storesCopies(c: pg.PoolClient): Promise<boolean> {
  const { rows } = await c.query("SELECT is_nullable FROM information_schema.columns WHERE table_name = 'changes' AND column_name = 'object'");
  return rows[0]?.is_nullable === 'NO';
}

/**
 * Commits `n` writes with contiguous revisions after the counter in one transaction, as n committed writes would:
 * `write(c, from, copies)` stores them at revisions from+1 … from+n (`copies`: the schema keeps a copy of the new
 * state in each change row), then the counter moves past them and the replicas' change feeds are woken. Returns
 * `from`, the revision before them.
 */
async function commitRevisions(pool: pg.Pool, n: number, write: (c: pg.PoolClient, from: number, copies: boolean) => Promise<unknown>): Promise<number> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const from = Number((await c.query('SELECT value FROM revision_counter WHERE id = 1 FOR UPDATE')).rows[0].value);
    await write(c, from, await storesCopies(c));
    await c.query('UPDATE revision_counter SET value = value + $1 WHERE id = 1', [n]);
    // As every committed write does: wake the replicas' change feeds.
    await c.query("SELECT pg_notify('plinth_changes', $1)", [String(from + n)]);
    await c.query('COMMIT');
    return from;
  } finally {
    c.release();
  }
}

/**
 * Commits `n` creates of ConfigMaps `w-<i>` of `tenant` in `namespace` as the write functions store them since
 * migration 0010 (the object row at its revision, a change row with no copy of the body; with one before it, so this
 * benchmark runs on either schema); every `labelEvery`-th is labelled app=needle. Returns the revision before them.
 */
function appendChanges(pool: pg.Pool, tenant: string, namespace: string, n: number, labelEvery: number): Promise<number> {
  return commitRevisions(pool, n, async (c, from, copies) => {
    await c.query(
      `INSERT INTO objects (tenant, resource, namespace, name, revision, body)
       SELECT $2, 'configmaps', $3, 'w-' || i, $1 + i,
         jsonb_build_object('apiVersion', 'v1', 'kind', 'ConfigMap', 'metadata', jsonb_build_object('name', 'w-' || i, 'namespace', $3::text,
           'labels', jsonb_build_object('app', CASE WHEN $5 > 0 AND i % $5 = 0 THEN 'needle' ELSE 'hay' END)))
       FROM generate_series(1, $4) AS i`,
      [from, tenant, namespace, n, labelEvery],
    );
    await c.query(copies ? sql.copyCreate : sql.noCopyCreate, [from, tenant, namespace, n]);
  });
}

/**
 * Commits an update of each of the first `n` ConfigMaps of namespace `big` (by name) as plinth_update stores it:
 * the object row at its new revision, a change row holding the state before. Returns the revision before them.
 */
function updateBig(pool: pg.Pool, n: number): Promise<number> {
  return commitRevisions(pool, n, (c, from, copies) =>
    c.query(
      `WITH picked AS (
         SELECT name, revision, body, row_number() OVER (ORDER BY name) AS i FROM objects
         WHERE tenant = 'default' AND resource = 'configmaps' AND namespace = 'big' ORDER BY name LIMIT $2
       ), logged AS (
         INSERT INTO changes (revision, tenant, resource, namespace, name, type, prev_object, prev_revision, object)
         SELECT $1 + i, 'default', 'configmaps', 'big', name, 'M', body, revision, CASE WHEN $3 THEN jsonb_set(body, '{data,k}', '"updated"') END FROM picked
       )
       UPDATE objects o SET revision = $1 + p.i, body = jsonb_set(p.body, '{data,k}', '"updated"')
       FROM picked p WHERE o.tenant = 'default' AND o.resource = 'configmaps' AND o.namespace = 'big' AND o.name = p.name`,
      [from, n, copies],
    ),
  );
}

/** Milliseconds of `fn`. */
async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/**
 * Lists over a million objects in one namespace, over HTTPS as kubectl
 * pages them (`limit=500` and continue tokens), and a label-selected list
 * of 10 among them; beside each, the raw PostgreSQL ceiling: the same
 * keyset page read by one pg client.
 */
async function main(): Promise<void> {
  const pgPort = 58300 + (process.pid % 400);
  const apiPort = 19300 + (process.pid % 400);
  const db = await startBenchPostgres('list-scale', pgPort);
  const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '8' }, apiPort);
  const base = `https://127.0.0.1:${apiPort}`;
  const agent = await benchAgent({ connections: 1 });
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  const get = async (path: string) => {
    const res = await request(`${base}${path}`, { dispatcher: agent });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${text.slice(0, 200)}`);
    return JSON.parse(text) as { items: unknown[]; metadata: { continue?: string; remainingItemCount?: number; resourceVersion: string } };
  };
  /** Names of `k` objects of namespace big spread evenly over it: cursors of pages anywhere in the list, not only its start. */
  const spread = (k: number) => Array.from({ length: k }, (_, i) => `cm-${String(Math.floor(((i + 0.5) * OBJECTS) / k)).padStart(7, '0')}`);
  /** Milliseconds of one page of `path` from each cursor of {@link spread}, at revision `rv` (-1: the newest). */
  const pagesFrom = async (path: string, rv: number): Promise<number[]> => {
    const out: number[] = [];
    for (const name of spread(20)) out.push(await timed(() => get(`${path}?limit=500&continue=${encodeContinue(rv, { namespace: 'big', name })}`)));
    return out;
  };
  try {
    const create = await request(`${base}/api/v1/namespaces`, { method: 'POST', dispatcher: agent, body: JSON.stringify({ metadata: { name: 'big' } }), headers: { 'content-type': 'application/json' } });
    await create.body.text();
    progress(`inserting ${OBJECTS.toLocaleString('en-US')} configmaps into namespace big with one INSERT … SELECT generate_series`);
    const t0 = Date.now();
    await pool.query(
      `INSERT INTO objects (tenant, resource, namespace, name, revision, body)
       SELECT 'default', 'configmaps', 'big', 'cm-' || lpad(i::text, 7, '0'), (SELECT value FROM revision_counter),
         jsonb_build_object('apiVersion', 'v1', 'kind', 'ConfigMap',
           'metadata', jsonb_build_object('name', 'cm-' || lpad(i::text, 7, '0'), 'namespace', 'big', 'uid', md5(i::text)::uuid, 'creationTimestamp', '2026-11-24T00:00:00Z',
             'labels', jsonb_build_object('app', CASE WHEN i % 100000 = 7 THEN 'needle' ELSE 'hay' END, 'shard', (i % 16)::text)),
           'data', jsonb_build_object('k', repeat('v', 100)))
       FROM generate_series(1, $1) AS i`,
      [OBJECTS],
    );
    await pool.query('ANALYZE objects');
    const version = (await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0].v;
    progress(`inserted in ${((Date.now() - t0) / 1000).toFixed(1)}s; paging with limit=500 (${PAGES} pages)`);
    const pageMs: number[] = [];
    let cont: string | undefined;
    let first: { remainingItemCount?: number } = {};
    for (let p = 0; p < PAGES; p++) {
      let page!: Awaited<ReturnType<typeof get>>;
      pageMs.push(await timed(async () => (page = await get(`/api/v1/namespaces/big/configmaps?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`))));
      if (p === 0) first = page.metadata;
      cont = page.metadata.continue;
      if (!cont) break;
    }
    progress(`newest-state pages, ms in order: ${pageMs.map((m) => m.toFixed(1)).join(' ')}`);
    progress(`first page and continue page at its revision 1 s later, ${FIRST_VS_CONTINUE_ROUNDS} times, in namespace big and across namespaces`);
    const firstVsContinue: Array<{ path: string; first: number[]; cont: number[] }> = [];
    {
      const out = firstVsContinue;
      for (const path of ['/api/v1/namespaces/big/configmaps', '/api/v1/configmaps']) {
        const row = { path, first: [] as number[], cont: [] as number[] };
        for (let k = 0; k < FIRST_VS_CONTINUE_ROUNDS; k++) {
          let page!: Awaited<ReturnType<typeof get>>;
          row.first.push(await timed(async () => (page = await get(`${path}?limit=500`))));
          await new Promise((r) => setTimeout(r, 1000));
          row.cont.push(await timed(() => get(`${path}?limit=500&continue=${encodeURIComponent(page.metadata.continue!)}`)));
        }
        out.push(row);
      }
    }
    progress('pages from 20 cursors spread over the whole namespace (newest state)');
    const deepMs = await pagesFrom('/api/v1/namespaces/big/configmaps', -1);
    progress('label-selected lists (app=needle, 10 of them; app in (needle,nothing); app=needle,shard notin (1,2))');
    const selMs: number[] = [];
    const inMs: number[] = [];
    const notinMs: number[] = [];
    for (let i = 0; i < 20; i++) {
      selMs.push(await timed(() => get('/api/v1/namespaces/big/configmaps?labelSelector=app%3Dneedle')));
      inMs.push(await timed(() => get('/api/v1/namespaces/big/configmaps?labelSelector=app+in+(needle,nothing)')));
      notinMs.push(await timed(() => get('/api/v1/namespaces/big/configmaps?labelSelector=app%3Dneedle,shard+notin+(1,2)')));
    }
    progress(`all-namespaces paging as kubectl get cm -A does (limit=500, ${PAGES} pages)`);
    const allMs: number[] = [];
    let allCont: string | undefined;
    for (let p = 0; p < PAGES; p++) {
      let page!: Awaited<ReturnType<typeof get>>;
      allMs.push(await timed(async () => (page = await get(`/api/v1/configmaps?limit=500${allCont ? `&continue=${encodeURIComponent(allCont)}` : ''}`))));
      allCont = page.metadata.continue;
      if (!allCont) break;
    }
    progress('raw PostgreSQL: the same keyset pages of 500 by one pg client');
    const rawMs: number[] = [];
    let last = '';
    for (let p = 0; p < PAGES; p++) {
      rawMs.push(
        await timed(async () => {
          const r = await pool.query("SELECT name, body FROM objects WHERE tenant = 'default' AND resource = 'configmaps' AND namespace = 'big' AND name > $1 ORDER BY namespace, name LIMIT 500", [last]);
          last = r.rows[r.rows.length - 1].name;
        }),
      );
    }
    progress(`watch catch-up: ${FOREIGN_CHANGES.toLocaleString('en-US')} changes of another tenant, then 10 of the watched one`);
    const foreignFrom = await appendChanges(pool, 'noise', 'x', FOREIGN_CHANGES, 0);
    await appendChanges(pool, 'default', 'big', 10, 1);
    const digestMs = await settleWatchCache(base, agent, pool);
    progress(`the server's change feed digested the burst in ${(digestMs / 1000).toFixed(1)} s`);
    const selective = await watchFor(base, agent, `/api/v1/namespaces/big/configmaps?watch=1&resourceVersion=${foreignFrom}&labelSelector=app%3Dneedle`, 10);
    progress(`unselective catch-up over ${OWN_CHANGES.toLocaleString('en-US')} changes of the watched resource`);
    const ownFrom = await appendChanges(pool, 'default', 'own', OWN_CHANGES, 0);
    await settleWatchCache(base, agent, pool);
    const unselective = await watchFor(base, agent, `/api/v1/namespaces/own/configmaps?watch=1&resourceVersion=${ownFrom}`, OWN_CHANGES);
    const rawCatchUp = await timed(() =>
      pool.query(
        `SELECT c.revision, coalesce(c.object, (SELECT o.body FROM objects o
             WHERE o.tenant = c.tenant AND o.resource = c.resource AND o.namespace = c.namespace AND o.name = c.name AND o.revision = c.revision)) AS body
         FROM changes c WHERE c.tenant = 'default' AND c.resource = 'configmaps' AND c.namespace = 'own' AND c.revision > $1 ORDER BY c.revision`,
        [ownFrom],
      ),
    );
    progress(`paging namespace big at the revision of its first page while ${UPDATED_SINCE.toLocaleString('en-US')} of its objects changed after it`);
    const firstPage = await get('/api/v1/namespaces/big/configmaps?limit=500');
    const firstAll = await get('/api/v1/configmaps?limit=500');
    await updateBig(pool, UPDATED_SINCE);
    // As before the catch-up phases: the server's change feed first digests the burst, which would otherwise share the
    // CPU with the first pages measured here (this phase measures the read of a past page, not the burst).
    progress(`the server's change feed digested the ${UPDATED_SINCE.toLocaleString('en-US')} updates in ${((await settleWatchCache(base, agent, pool)) / 1000).toFixed(1)} s`);
    const changedMs: number[] = [];
    let changedCont = firstPage.metadata.continue;
    for (let p = 1; p < PAGES && changedCont; p++) {
      let page!: Awaited<ReturnType<typeof get>>;
      changedMs.push(await timed(async () => (page = await get(`/api/v1/namespaces/big/configmaps?limit=500&continue=${encodeURIComponent(changedCont!)}`))));
      changedCont = page.metadata.continue;
    }
    progress(`continue pages at the past revision: first ${changedMs[0]?.toFixed(1)} ms, slowest ${Math.max(...changedMs).toFixed(1)} ms (page ${changedMs.indexOf(Math.max(...changedMs)) + 1})`);
    progress('the same past revision: pages from 20 cursors spread over the namespace; all namespaces (continue pages and spread cursors)');
    const pastSpreadMs = await pagesFrom('/api/v1/namespaces/big/configmaps', Number(firstPage.metadata.resourceVersion));
    const pastAllMs: number[] = [];
    let allPastCont = firstAll.metadata.continue;
    for (let p = 1; p < PAGES && allPastCont; p++) {
      let page!: Awaited<ReturnType<typeof get>>;
      pastAllMs.push(await timed(async () => (page = await get(`/api/v1/configmaps?limit=500&continue=${encodeURIComponent(allPastCont!)}`))));
      allPastCont = page.metadata.continue;
    }
    const pastAllSpreadMs = await pagesFrom('/api/v1/configmaps', Number(firstAll.metadata.resourceVersion));
    const pg50 = percentiles(pageMs);
    const raw = percentiles(rawMs);
    const sel = percentiles(selMs);
    const inn = percentiles(inMs);
    const notin = percentiles(notinMs);
    const all = percentiles(allMs);
    console.log(`\nlist benchmark: ${OBJECTS.toLocaleString('en-US')} configmaps in one namespace (one replica, durable PostgreSQL ${version})\n`);
    console.log('first page vs continue page at its revision 1 s later (limit=500), ms in order; goal: continue <= 2x first');
    for (const { path, first: f, cont: c } of firstVsContinue) {
      const ratio = percentiles(c).p50 / percentiles(f).p50;
      console.log(`  ${path.padEnd(36)} first ${f.map((m) => m.toFixed(1)).join(' ')} | continue ${c.map((m) => m.toFixed(1)).join(' ')} | p50 ratio ${ratio.toFixed(2)}`);
    }
    console.log('');
    console.log('operation                                           p50 ms    p99 ms');
    console.log(`API page, limit=500 + continue (${pageMs.length} pages)          ${pg50.p50.toFixed(1).padStart(8)}  ${pg50.p99.toFixed(1).padStart(8)}`);
    const deep = percentiles(deepMs);
    console.log(`API page from 20 cursors spread over the list       ${deep.p50.toFixed(1).padStart(8)}  ${deep.p99.toFixed(1).padStart(8)}`);
    console.log(`raw PG: the same keyset page of 500                 ${raw.p50.toFixed(1).padStart(8)}  ${raw.p99.toFixed(1).padStart(8)}`);
    console.log(`API labelSelector=app=needle (10 of ${OBJECTS / 1000}k)            ${sel.p50.toFixed(1).padStart(8)}  ${sel.p99.toFixed(1).padStart(8)}`);
    console.log(`API labelSelector=app in (needle,nothing)          ${inn.p50.toFixed(1).padStart(8)}  ${inn.p99.toFixed(1).padStart(8)}`);
    console.log(`API labelSelector=app=needle,shard notin (1,2)     ${notin.p50.toFixed(1).padStart(8)}  ${notin.p99.toFixed(1).padStart(8)}`);
    console.log(`API all namespaces, limit=500 + continue           ${all.p50.toFixed(1).padStart(8)}  ${all.p99.toFixed(1).padStart(8)}   (${((500 / all.p50) * 1000).toFixed(0)} objects/s; goal >= 20,000/s)`);
    const changed = percentiles(changedMs);
    console.log(`API page at a past revision, ${UPDATED_SINCE / 1000}k changed since    ${changed.p50.toFixed(1).padStart(8)}  ${changed.p99.toFixed(1).padStart(8)}   (${changedMs.length} continue pages; goal <= 50 ms)`);
    for (const [label, ms] of [
      ['  the same, 20 cursors spread over the namespace', pastSpreadMs],
      ['  all namespaces, continue pages', pastAllMs],
      ['  all namespaces, 20 cursors spread', pastAllSpreadMs],
    ] as const) {
      const p = percentiles([...ms]);
      console.log(`${label.padEnd(52)}${p.p50.toFixed(1).padStart(8)}  ${p.p99.toFixed(1).padStart(8)}   (${ms.length} pages; goal <= 50 ms)`);
    }
    console.log(`\nwatch catch-up, selective: 10 events past ${FOREIGN_CHANGES.toLocaleString('en-US')} changes of another tenant in ${selective.ms.toFixed(0)} ms (${selective.events} events; target <= 1000 ms)`);
    console.log(`watch catch-up, unselective: ${unselective.events.toLocaleString('en-US')} events in ${unselective.ms.toFixed(0)} ms = ${((unselective.events / unselective.ms) * 1000).toFixed(0)} events/s (target >= 50,000/s); raw PG reads the same ${OWN_CHANGES.toLocaleString('en-US')} changes in ${rawCatchUp.toFixed(0)} ms`);
    console.log(`\nfirst page remainingItemCount: ${first.remainingItemCount ?? '(left out: more than the cap follow)'}`);
    console.log(`a full kubectl listing would take about ${((OBJECTS / 500) * pg50.p50 / 1000).toFixed(0)} s of server time for its ${OBJECTS / 500} pages`);
  } finally {
    await agent.close();
    await pool.end();
    await stopServerAndDatabase(server, db);
  }
}

runBenchmark(main);
