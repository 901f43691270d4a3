import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ReplicaProcess } from '../fault/support/replica-process.js';
import { eventually } from '../support/eventually.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { TestPostgres } from '../support/test-postgres.js';
import { query, SHARDS, TENANTS } from './support/shards.js';

/** Objects of the moved tenant: the issue asks for 20,000, which a shared 2-core host cannot create within the runner's 180 s per file (PLINTH_TEST_MOVE_OBJECTS sets it). */
const OBJECTS = Number(process.env.PLINTH_TEST_MOVE_OBJECTS ?? 400);
const WRITERS = 16;
const TENANT = 'big';
const P = `/clusters/${TENANT}/api/v1/namespaces/default/configmaps`;
/** The object whose copy the destination holds for a few seconds: the mover is certainly mid-copy then. */
const HOLD = 'seed-5-hold';
const t0 = Date.now();
/** Progress with seconds since the file started (the runner gives a file 180 s). */
const note = (what: string) => console.log(`[stale-mover] +${Math.round((Date.now() - t0) / 1000)} s ${what}`);

async function call(base: string, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, { method, headers: body ? { 'content-type': contentType } : {}, body: body ? JSON.stringify(body) : undefined, signal: AbortSignal.timeout(60_000) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function leadsMover(r: ReplicaProcess): Promise<boolean> {
  const res = await fetch(`${r.url}/metrics`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
  if (!res || res.status !== 200) return false;
  const line = (await res.text()).split('\n').find((l) => l.startsWith('plinth_leader{') && l.includes('controller="tenant-mover"'));
  return line !== undefined && line.endsWith(' 1');
}

function processState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
}

// Two real server processes in cluster mode and two more PostgreSQL servers as shards b and c. The tenant mover's
// leader is stopped (SIGSTOP) mid-copy, past the lease, so the other replica takes the move over; then it resumes
// and its move runs on: every step it takes must fail (fenced by the move's generation) and change nothing.
describe('shards: a mover paused past its lease while another takes the move over', { timeout: 900_000 }, () => {
  let database: TestDatabase;
  let b: TestPostgres;
  let c: TestPostgres;
  const replicas: ReplicaProcess[] = [];

  before(async () => {
    const redisUrl = process.env.PLINTH_TEST_REDIS_URL;
    assert.ok(redisUrl, 'redis-server must be installed (run with test/run-tests.mjs)');
    [b, c] = await Promise.all([TestPostgres.start('stale_mover_b'), TestPostgres.start('stale_mover_c')]);
    database = await createTestDatabase('stale_mover');
    const env = { DATABASE_URL: database.url, REDIS_URL: redisUrl, PLINTH_WORKERS: '1', PLINTH_DB_POOL_SIZE: '10' };
    replicas.push(await ReplicaProcess.start(env), await ReplicaProcess.start(env));
    note('replicas up');
    const [r] = replicas;
    for (const [name, pg] of [['b', b], ['c', c]] as const) {
      assert.equal((await call(r.url, 'POST', '/api/v1/namespaces/default/secrets', { metadata: { name: `shard-${name}` }, data: { url: Buffer.from(pg.url).toString('base64') } })).status, 201);
      assert.equal((await call(r.url, 'POST', SHARDS, { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Shard', metadata: { name }, spec: { secretRef: { name: `shard-${name}`, namespace: 'default' } } })).status, 201);
    }
    for (const rep of replicas) {
      for (const name of ['b', 'c']) {
        await eventually(async () => {
          const s = await call(rep.url, 'GET', `${SHARDS}/${name}`);
          return s.status === 200 && s.body.status?.conditions?.some((x: { type: string; status: string }) => x.type === 'Ready' && x.status === 'True');
        }, { timeoutMs: 60_000, message: `shard ${name} ready` });
      }
    }
  });
  after(async () => {
    for (const r of replicas) {
      if (r.alive) r.proc.kill('SIGCONT');
      await r.kill().catch(() => undefined);
    }
    await database?.drop().catch(() => undefined);
    await b?.close().catch(() => undefined);
    await c?.close().catch(() => undefined);
  });

  it('keeps every acknowledged write, brings back no deleted object, and leaves the tenant on exactly one shard', async () => {
    const [r0, r1] = replicas;
    // The Shard's Ready condition is written by one replica; r0 places the tenant once its own pool for b is up.
    let created: { status: number; body: any } = { status: 0, body: undefined };
    await eventually(async () => {
      created = await call(r0.url, 'POST', TENANTS, { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: TENANT }, spec: { shard: 'b' } });
      return created.status !== 409 || !String(created.body?.message).includes('is not ready');
    }, { timeoutMs: 60_000, message: 'shard b ready on r0' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await eventually(async () => (await call(r1.url, 'GET', `${P}?limit=1`)).status === 200, { message: 'the tenant served by both replicas' });
    const seeded = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async (_, k) => {
        for (let i = next++; i < OBJECTS; i = next++) {
          const res = await call(k % 2 ? r1.url : r0.url, 'POST', P, { metadata: { name: `seed-${i}` }, data: { v: '0' } });
          assert.equal(res.status, 201, JSON.stringify(res.body));
        }
      }),
    );
    const held = await call(r0.url, 'POST', P, { metadata: { name: HOLD }, data: { v: '0' } });
    assert.equal(held.status, 201, JSON.stringify(held.body));
    note(`${OBJECTS} objects created in ${Math.round(performance.now() - seeded)} ms`);

    // Who leads the mover now is stopped later; the writers use the other replica (a stopped process answers nothing).
    const leader = (await leadsMover(r0)) ? r0 : (await leadsMover(r1)) ? r1 : undefined;
    assert.ok(leader, 'one replica leads the tenant mover');
    const other = leader === r0 ? r1 : r0;

    // Every acknowledged value per name ('deleted' once deleted); names whose outcome is unknown are left out.
    const acked = new Map<string, string>();
    const unknown = new Set<string>();
    const failures: string[] = [];
    let stop = false;
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      const mine = Array.from({ length: Math.ceil(OBJECTS / WRITERS) }, (_, j) => `seed-${j * WRITERS + w}`).filter((n) => Number(n.slice(5)) < OBJECTS);
      let made = 0;
      for (let n = 1; !stop; n++) {
        const roll = n % 10;
        let name: string;
        let res: { status: number; body: any };
        try {
          if (roll < 5 && mine.length > 0) {
            name = mine[(n * 7919) % mine.length];
            res = await call(other.url, 'PATCH', `${P}/${name}`, { data: { v: String(n) } }, 'application/merge-patch+json');
            if (res.status === 200) acked.set(name, String(n));
          } else if (roll < 7 && mine.length > 0) {
            name = mine.splice((n * 104_729) % mine.length, 1)[0];
            res = await call(other.url, 'DELETE', `${P}/${name}`);
            if (res.status === 200) acked.set(name, 'deleted');
          } else {
            name = `w${w}-${made++}`;
            res = await call(other.url, 'POST', P, { metadata: { name }, data: { v: String(n) } });
            if (res.status === 201) {
              acked.set(name, String(n));
              mine.push(name);
            }
          }
          if (res.status >= 300) {
            unknown.add(name);
            failures.push(`${name}: ${res.status} ${res.body?.message}`);
          }
        } catch (err) {
          unknown.add(name!);
          failures.push(`${name!}: ${(err as Error).message}`);
        }
      }
    });
    await new Promise((r) => setTimeout(r, 1000));

    await query(c.url, `CREATE FUNCTION hold_copy() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        IF NEW.tenant = '${TENANT}' AND NEW.name = '${HOLD}' THEN PERFORM pg_sleep(3); END IF; RETURN NEW; END $$;
      CREATE TRIGGER hold_copy BEFORE INSERT ON objects FOR EACH ROW EXECUTE FUNCTION hold_copy()`);
    // (Retried: on a loaded host a replica's shard probe can miss and call c not ready for a moment, 409.)
    let patched: { status: number; body: any } | undefined;
    await eventually(async () => (patched = await call(other.url, 'PATCH', `${TENANTS}/${TENANT}`, { spec: { shard: 'c' } }, 'application/merge-patch+json')).status === 200, {
      message: 'the move accepted',
      timeoutMs: 20_000,
    }).catch((err) => assert.fail(`${(err as Error).message}: ${JSON.stringify(patched?.body)}`));
    await eventually(async () => (await query(c.url, "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep'")).length > 0, { message: 'the copy held mid-way', timeoutMs: 60_000 });
    note('the copy is held; stopping the leader');

    // The leader stops mid-copy; PostgreSQL ends its election session after the lease (15 s) and the other replica
    // takes the mover over and starts the move again; then the old leader resumes with its move() still running.
    leader.proc.kill('SIGSTOP');
    const stoppedAt = Date.now();
    try {
      await eventually(() => leadsMover(other), { timeoutMs: 60_000, message: 'the other replica leads the tenant mover' });
      assert.equal(processState(leader.proc.pid!), 'T', 'the old leader was still stopped when the other took over');
      // Past the lock's timeout, and the new leader's move under way (it too is held on the copy).
      note(`the other replica led the mover ${Date.now() - stoppedAt} ms after the stop`);
    } finally {
      leader.proc.kill('SIGCONT');
    }

    let last: any;
    const moved = await eventually(async () => {
      last = (await call(other.url, 'GET', `${TENANTS}/${TENANT}`)).body;
      const moving = last?.status?.conditions?.find((x: { type: string }) => x.type === 'Moving');
      return last?.spec?.shard === last?.status?.shard && moving?.status === 'False' ? last : false;
    }, { message: 'the move to end', timeoutMs: 45_000 }).catch((err) => {
      stop = true;
      for (const r of replicas) console.log(`[stale-mover] ${r === leader ? 'resumed' : 'other'} replica's log:\n${r.output.split('\n').filter((l) => l.includes('move')).slice(-15).join('\n')}`);
      throw new Error(`${(err as Error).message}: spec ${JSON.stringify(last?.spec)}, status ${JSON.stringify(last?.status)}`);
    });
    // The resumed process has run its stale steps by now; writes go on a little longer on the tenant's final shard.
    note('the move ended');
    await new Promise((r) => setTimeout(r, 3000));
    stop = true;
    await Promise.all(writers);
    await query(c.url, 'DROP TRIGGER hold_copy ON objects; DROP FUNCTION hold_copy()');

    const final = moved.status.shard as string;
    note(`tenant on shard ${final} (${moved.status.conditions.find((x: { type: string }) => x.type === 'Moving')?.reason}); ${acked.size} names written, ${failures.length} writes not acknowledged: ${failures.slice(0, 3).join('; ')}`);
    // What a client reads, through both replicas: every acknowledged value, no deleted object.
    for (const r of [other, leader]) {
      const list = await call(r.url, 'GET', P);
      assert.equal(list.status, 200, `list on the ${r === leader ? 'resumed' : 'other'} replica: ${JSON.stringify(list.body)?.slice(0, 300)}`);
      const stored = new Map<string, string>(list.body.items.map((o: { metadata: { name: string }; data: { v: string } }) => [o.metadata.name, o.data?.v]));
      const lost: string[] = [];
      for (const [name, v] of acked) {
        if (unknown.has(name)) continue;
        if (v === 'deleted' ? stored.has(name) : stored.get(name) !== v) lost.push(`${name}: acknowledged ${v}, stored ${stored.get(name) ?? 'nothing'}`);
      }
      assert.deepEqual(lost.slice(0, 10), [], `${lost.length} acknowledged writes not as acknowledged (${r === leader ? 'resumed' : 'other'} replica)`);
      assert.ok(stored.has('seed-0') || acked.get('seed-0') === 'deleted');
    }
    // Exactly one shard holds the tenant; the others keep none of its rows.
    const urls: Record<string, string> = { default: database.url, b: b.url, c: c.url };
    await eventually(async () => {
      const holders: string[] = [];
      for (const [shard, url] of Object.entries(urls)) {
        const [row] = await query<{ n: number }>(url, `SELECT (SELECT count(*) FROM tenants WHERE name = $1) + (SELECT count(*) FROM objects WHERE tenant = $1) + (SELECT count(*) FROM changes WHERE tenant = $1) AS n`, [TENANT]);
        if (Number(row.n) > 0) holders.push(shard);
      }
      return holders.length === 1 && holders[0] === final;
    }, { message: `the tenant's rows only on shard ${final}`, timeoutMs: 40_000 });
    note('rows on one shard only');
    // The scenario happened: the resumed replica's move ran on and ended without completing: refused as superseded at
    // its next step, or ended by its own step-down (whichever it met first after SIGCONT).
    const text = await (await fetch(`${leader.url}/metrics`)).text();
    const count = (result: string) => Number(text.split('\n').find((l) => l.startsWith(`plinth_tenant_move_total{result="${result}"}`))?.split(' ').pop() ?? 0);
    note(`resumed replica's moves: superseded ${count('superseded')}, handed_over ${count('handed_over')}, moved ${count('moved')}, rolled_back ${count('rolled_back')}`);
    assert.ok(count('superseded') + count('handed_over') >= 1, 'the resumed mover ended its move without completing it');
    assert.equal(count('moved') + count('rolled_back'), 0, 'the resumed mover neither switched nor rolled back');
  });
});
