import assert from 'node:assert/strict';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { adminIdentity, httpsAgent } from '../support/credentials.js';
import { eventually } from '../support/eventually.js';
import { conditionOf, createMany, query, type ShardedSetup, SHARDS, startShardedReplicas, TENANTS } from './support/shards.js';
import type { TestPostgres } from '../support/test-postgres.js';
import type { TestServer } from '../support/test-server.js';

/**
 * A watcher that behaves as an informer's reflector: lists, watches from the
 * list's resourceVersion, re-watches from the last resourceVersion it saw
 * whenever the stream ends, and relists on 410 Expired.
 */
class Reflector {
  readonly added = new Map<string, number[]>();
  readonly revisions: number[] = [];
  relists = 0;
  rewatches = 0;
  private last = '';
  private stopped = false;
  private req: ReturnType<typeof https.get> | undefined;
  readonly done: Promise<void>;

  /** `from`: start watching from this resourceVersion instead of listing first (a client that was away). */
  constructor(
    private readonly urls: string[],
    private readonly path: string,
    from?: string,
  ) {
    if (from !== undefined) this.last = from;
    this.done = this.run();
  }

  private async run(): Promise<void> {
    let turn = 0;
    if (this.last === '') await this.list(this.urls[0]);
    while (!this.stopped) {
      const expired = await this.watchOnce(this.urls[turn++ % this.urls.length]);
      if (this.stopped) return;
      if (expired) {
        this.relists++;
        await this.list(this.urls[0]);
      } else this.rewatches++;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private async list(url: string): Promise<void> {
    for (;;) {
      const res = await request(url).get(this.path);
      if (res.status === 200) {
        this.last = res.body.metadata.resourceVersion;
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** One watch from the last resourceVersion; resolves true when it ended with 410 Expired. */
  private watchOnce(url: string): Promise<boolean> {
    return new Promise((resolve) => {
      const u = new URL(`${url}${this.path}?watch=1&allowWatchBookmarks=true&resourceVersion=${this.last}`);
      let buf = '';
      let expired = false;
      this.req = https.get(u, { agent: httpsAgent(adminIdentity()) }, (res) => {
        if (res.statusCode === 410) expired = true;
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          buf += d;
          let i: number;
          while ((i = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, i);
            buf = buf.slice(i + 1);
            if (!line.trim()) continue;
            const ev = JSON.parse(line);
            if (ev.type === 'ERROR') {
              if (ev.object?.code === 410) expired = true;
              continue;
            }
            const rv = ev.object.metadata.resourceVersion as string;
            this.last = rv;
            if (ev.type === 'BOOKMARK') continue;
            this.revisions.push(Number(rv));
            if (ev.type === 'ADDED') {
              const name = ev.object.metadata.name as string;
              this.added.set(name, [...(this.added.get(name) ?? []), Number(rv)]);
            }
          }
        });
        res.on('end', () => resolve(expired));
        res.on('error', () => resolve(expired));
      });
      this.req.on('error', () => resolve(expired));
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.req?.destroy();
    await this.done;
  }
}

// A tenant moved live between two of three PostgreSQL servers while 16 writers and 10 watchers run, on two replicas.
describe('shards: moving a tenant live between shards', { timeout: 300_000 }, () => {
  let setup: ShardedSetup;
  let s: TestServer;
  let second: TestServer;
  let b: TestPostgres;
  let c: TestPostgres;

  before(async () => {
    setup = await startShardedReplicas('shard_moves');
    ({ s, second, b, c } = setup);
  });
  after(async () => setup?.close());

  it('moves a tenant under 16 writers and 10 watchers: no acknowledged write lost or duplicated, none on the source after the switch, watchers continue without a gap', async () => {
    await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'mover' }, spec: { shard: 'b' } }).expect(201);
    const P = '/clusters/mover/api/v1/namespaces/default/configmaps';
    await createMany(s.url, P, 300, (i) => ({ metadata: { name: `seed-${i}` }, data: { i: String(i) } }));
    const watchers = Array.from({ length: 10 }, () => new Reflector([s.url, second.url], P));
    await new Promise((r) => setTimeout(r, 500));

    const acked = new Map<string, number>();
    const failures: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 16 }, async (_, w) => {
      for (let n = 0; !stop; n++) {
        const name = `w${w}-${n}`;
        const res = await request(w % 2 ? second.url : s.url).post(P).send({ metadata: { name }, data: { w: String(w) } });
        if (res.status === 201) acked.set(name, Number(res.body.metadata.resourceVersion));
        else failures.push(`${name}: ${res.status} ${res.body?.message}`);
      }
    });
    await new Promise((r) => setTimeout(r, 500));
    // A client that saw the tenant at this resourceVersion and comes back only after the move.
    const away = (await request(s.url).get(P).expect(200)).body.metadata.resourceVersion as string;
    await request(s.url).patch(`${TENANTS}/mover`).set('Content-Type', 'application/merge-patch+json').send({ spec: { shard: 'c' } }).expect(200);
    const moved = await eventually(async () => {
      const t = (await request(s.url).get(`${TENANTS}/mover`)).body;
      return conditionOf(t, 'Moved')?.status === 'True' && t.status.shard === 'c' ? t : false;
    }, { message: 'the Moved condition', timeoutMs: 60_000 });
    const since = Number(moved.status.shardResourceVersion);
    assert.ok(Number(away) < since, 'the returning client resumes from before the switch');
    const returning = new Reflector([second.url, s.url], P, away);
    await new Promise((r) => setTimeout(r, 1000));
    stop = true;
    await Promise.all(writers);
    assert.deepEqual(failures, [], 'every write is answered 201 (writes during the fence wait, none fails)');

    // Nothing of the tenant on the source above its fence; everything acknowledged afterwards came from the destination.
    const [{ top }] = await query<{ top: string | null }>(b.url, 'SELECT max(revision) AS top FROM changes WHERE tenant = $1', ['mover']);
    assert.ok(top === null || Number(top) < since, `source revision ${top} is below the switch ${since}`);
    const afterSwitch = [...acked.values()].filter((rv) => rv >= since);
    assert.ok(afterSwitch.length > 0, 'writes were acknowledged on the destination');
    const onC = await query<{ name: string; revision: string }>(c.url, "SELECT name, revision FROM objects WHERE tenant = $1 AND resource = 'configmaps'", ['mover']);
    const stored = new Map(onC.map((r) => [r.name, Number(r.revision)]));
    for (const [name, rv] of acked) assert.equal(stored.get(name), rv, `acknowledged write ${name}@${rv} is on the destination`);
    for (let i = 0; i < 300; i++) assert.ok(stored.has(`seed-${i}`));

    // Every watcher saw every acknowledged create exactly once, in revision order, and never relisted.
    const last = Math.max(...acked.values());
    await eventually(async () => (watchers.every((w) => w.revisions.length > 0 && w.revisions[w.revisions.length - 1] >= last)), { message: 'watchers caught up', timeoutMs: 60_000 });
    for (const w of watchers) await w.stop();
    // The returning client gets, from the destination, every change after the resourceVersion it had: those made on
    // the source before the switch (the copied history) and those after, each once, in order, without a 410.
    await eventually(async () => returning.revisions.length > 0 && returning.revisions[returning.revisions.length - 1] >= last, { message: 'the returning client caught up', timeoutMs: 60_000 });
    await returning.stop();
    assert.equal(returning.relists, 0);
    for (let k = 1; k < returning.revisions.length; k++) assert.ok(returning.revisions[k] > returning.revisions[k - 1], `returning client in order at ${k}`);
    for (const [name, rv] of acked) assert.deepEqual(returning.added.get(name), rv > Number(away) ? [rv] : undefined, `returning client and ${name}@${rv}`);
    assert.ok([...acked.values()].some((rv) => rv > Number(away) && rv < since), 'some of what it missed was written on the source');
    for (const [i, w] of watchers.entries()) {
      assert.equal(w.relists, 0, `watcher ${i} never got 410`);
      assert.ok(w.rewatches >= 1, `watcher ${i}'s stream ended at the switch and it re-watched`);
      for (let k = 1; k < w.revisions.length; k++) assert.ok(w.revisions[k] > w.revisions[k - 1], `watcher ${i} in order at ${k}`);
      for (const [name, rv] of acked) assert.deepEqual(w.added.get(name), [rv], `watcher ${i} saw ${name} once`);
    }

    // The source keeps nothing of the tenant once the grace period is over.
    await eventually(async () => ((await query(b.url, 'SELECT 1 FROM tenants WHERE name = $1', ['mover'])).length === 0), { message: 'the source emptied', timeoutMs: 60_000 });
    await request(second.url).get(`${P}/seed-0`).expect(200);
  });

  it('refuses a move to a cordoned or unknown shard, and a second move while one runs', async () => {
    await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'stays' }, spec: { shard: 'b' } }).expect(201);
    await request(s.url).patch(`${SHARDS}/c`).set('Content-Type', 'application/merge-patch+json').send({ spec: { unschedulable: true } }).expect(200);
    const cordoned = await request(s.url).patch(`${TENANTS}/stays`).set('Content-Type', 'application/merge-patch+json').send({ spec: { shard: 'c' } }).expect(409);
    assert.match(cordoned.body.message, /cordoned/);
    await request(s.url).patch(`${SHARDS}/c`).set('Content-Type', 'application/merge-patch+json').send({ spec: { unschedulable: false } }).expect(200);
    const unknown = await request(s.url).patch(`${TENANTS}/stays`).set('Content-Type', 'application/merge-patch+json').send({ spec: { shard: 'nowhere' } }).expect(422);
    assert.equal(unknown.body.details.causes[0].field, 'spec.shard');
    await createMany(s.url, '/clusters/stays/api/v1/namespaces/default/configmaps', 200, (i) => ({ metadata: { name: `o-${i}` } }));
    // The destination holds the copy of one object for a few seconds: the move is certainly running meanwhile.
    await query(c.url, `CREATE FUNCTION hold_copy() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        IF NEW.tenant = 'stays' AND NEW.name = 'o-0' THEN PERFORM pg_sleep(3); END IF; RETURN NEW; END $$;
      CREATE TRIGGER hold_copy BEFORE INSERT ON objects FOR EACH ROW EXECUTE FUNCTION hold_copy()`);
    await request(s.url).patch(`${TENANTS}/stays`).set('Content-Type', 'application/merge-patch+json').send({ spec: { shard: 'c' } }).expect(200);
    await eventually(async () => (await query(c.url, "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep'")).length > 0, { message: 'the copy held', timeoutMs: 60_000 });
    const again = await request(s.url).patch(`${TENANTS}/stays`).set('Content-Type', 'application/merge-patch+json').send({ spec: { shard: 'default' } }).expect(409);
    assert.match(again.body.message, /a move to shard c is in progress/);
    const moved = await eventually(async () => {
      const t = (await request(s.url).get(`${TENANTS}/stays`)).body;
      return conditionOf(t, 'Moved')?.status === 'True' ? t : false;
    }, { message: 'the move to finish', timeoutMs: 60_000 });
    assert.equal(moved.status.shard, 'c');
    await query(c.url, 'DROP TRIGGER hold_copy ON objects; DROP FUNCTION hold_copy()');
  });
});
