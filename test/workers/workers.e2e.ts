import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../support/eventually.js';
import { WatchClient, type WatchEvent } from '../watch/support/watch-client.js';
import { fetchOnNewConnection, isAlive, leaders, sample, type WorkerScrape, WorkersProcess } from './support/workers-process.js';

const NS = 'workers';
const LABEL = 'suite=workers';

interface Written {
  name: string;
  rv: number;
}

/** Creates a labelled ConfigMap on a connection of its own (so the port's scheduler picks the worker); retries refused connections. */
async function create(url: string, name: string, extra: Record<string, unknown> = {}): Promise<Written> {
  return eventually(
    async () => {
      const res = await fetchOnNewConnection(`${url}/api/v1/namespaces/${NS}/configmaps`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ metadata: { name, labels: { suite: 'workers' }, ...extra }, data: { v: name } }),
      });
      assert.equal(res.status, 201, res.text);
      const body = JSON.parse(res.text) as { metadata: { resourceVersion: string; uid: string } };
      return { name, rv: Number(body.metadata.resourceVersion), uid: body.metadata.uid };
    },
    { timeoutMs: 30_000, message: `create ${name}` },
  );
}

/** The controllers led by no worker or by more than one, across `scrapes` (one per worker). */
function misElected(scrapes: WorkerScrape[]): string[] {
  const total = new Map<string, number>();
  for (const s of scrapes) for (const [name, v] of leaders(s.text)) total.set(name, (total.get(name) ?? 0) + v);
  return [...total].filter(([, n]) => n !== 1).map(([name, n]) => `${name}=${n}`);
}

/** The changes (not BOOKMARKs) a watch got, waiting for `n` of them. */
async function changes(w: WatchClient, n: number): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  while (out.length < n) {
    const e = await w.next(30_000);
    if (e.type !== 'BOOKMARK') out.push(e);
  }
  return out;
}

/** /readyz?verbose on eight new connections (the port's scheduler alternates the workers): every answer 200 with `[+]workers ok`. */
async function assertEveryWorkerReady(url: string): Promise<void> {
  for (let i = 0; i < 8; i++) {
    const res = await fetchOnNewConnection(`${url}/readyz?verbose`);
    assert.equal(res.status, 200, res.text);
    assert.match(res.text, /^\[\+\]workers ok$/m);
  }
}

describe('PLINTH_WORKERS=2: two server processes on one port, one embedded PostgreSQL', { timeout: 600_000 }, () => {
  let server: WorkersProcess;
  const pids = new Set<number>();
  const watches: WatchClient[] = [];

  /** The workers that answered right after /readyz first said 200. */
  let atReady: WorkerScrape[];

  before(async () => {
    server = await WorkersProcess.start(2, {}, true);
    atReady = await server.scrapeEach();
    for (const s of atReady) pids.add(s.pid);
    const res = await fetch(`${server.url}/api/v1/namespaces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ metadata: { name: NS } }) });
    assert.equal(res.status, 201);
  });
  after(async () => {
    for (const w of watches) w.close();
    await server?.kill([...pids]);
  });

  it('serves from two worker processes, each a replica of its own, with every controller and the scheduled jobs led by exactly one', async () => {
    const scrapes = await server.scrapeEach();
    assert.equal(scrapes.length, 2, 'two distinct worker pids answer on the one port');
    assert.ok(scrapes.every((s) => s.pid !== server.proc.pid), 'the primary serves no request itself');
    assert.notEqual(scrapes[0].worker, scrapes[1].worker);
    const names = [...leaders(scrapes[0].text).keys()];
    assert.ok(names.includes('garbage-collector') && names.includes('scheduled-jobs'), names.join(','));
    assert.deepEqual(misElected(scrapes), []);
  });

  it('answers /readyz 200 only once every worker serves (so keep-alive clients spread over them), and each worker says so', async () => {
    // The second worker starts only after the first serves: ready on the first alone, only one would answer here.
    assert.equal(atReady.length, 2, 'both workers answered as soon as /readyz said 200');
    await assertEveryWorkerReady(server.url);
  });

  it('delivers every write, through either worker, to watches on every worker once and in order, from any revision either worker returned', async () => {
    const list = await fetch(`${server.url}/api/v1/namespaces/${NS}/configmaps?labelSelector=${LABEL}`);
    const from = Number(((await list.json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion);
    // Each watch and each write on a connection of its own: the scheduler hands them to the workers in turn.
    const fromList: WatchClient[] = [];
    for (let i = 0; i < 4; i++) fromList.push(await WatchClient.watch(server.url, `/api/v1/namespaces/${NS}/configmaps?labelSelector=${LABEL}&resourceVersion=${from}`));
    watches.push(...fromList);
    await eventually(async () => {
      const scrapes = await server.scrapeEach();
      return scrapes.length === 2 && scrapes.every((s) => (sample(s.text, 'plinth_watchers') ?? 0) >= 1);
    }, { timeoutMs: 30_000, message: 'watches open on both workers' });

    // A client resumes from the revision its write returned, on whichever worker its next connection reaches.
    const written: Written[] = [];
    const resumed: { from: number; watch: WatchClient }[] = [];
    for (let i = 0; i < 6; i++) {
      const w = await create(server.url, `cm-${i}`);
      written.push(w);
      const watch = await WatchClient.watch(server.url, `/api/v1/namespaces/${NS}/configmaps?labelSelector=${LABEL}&resourceVersion=${w.rv}`);
      watches.push(watch);
      resumed.push({ from: w.rv, watch });
    }
    for (let i = 6; i < 10; i++) written.push(await create(server.url, `cm-${i}`));

    const scrapes = await server.scrapeEach();
    assert.ok(scrapes.every((s) => (sample(s.text, 'plinth_http_requests_total', 'verb="create",group="",resource="configmaps",code="201"') ?? 0) >= 1), 'both workers took writes');
    const expected = (after: number) => written.filter((w) => w.rv > after).map((w) => [w.name, w.rv]);
    for (const watch of fromList) {
      const got = await changes(watch, written.length);
      assert.deepEqual(got.map((e) => [e.object.metadata.name, Number(e.object.metadata.resourceVersion)]), expected(from));
      assert.ok(got.every((e) => e.type === 'ADDED'));
    }
    for (const { from: rv, watch } of resumed) {
      const want = expected(rv);
      const got = await changes(watch, want.length);
      assert.deepEqual(got.map((e) => [e.object.metadata.name, Number(e.object.metadata.resourceVersion)]), want, `watch from ${rv}`);
    }
    // Nothing more (no repeat) arrives once a later write is seen by all.
    const last = await create(server.url, 'cm-last');
    for (const w of [...fromList, ...resumed.map((r) => r.watch)]) {
      const [e] = await changes(w, 1);
      assert.deepEqual([e.object.metadata.name, Number(e.object.metadata.resourceVersion)], [last.name, last.rv]);
    }
  });

  it("runs a controller's work once: the garbage collector deletes a dependent whose owner was deleted, one DELETED seen on every worker", async () => {
    const owner = (await create(server.url, 'gc-owner')) as Written & { uid: string };
    const watchFrom = owner.rv;
    const gcWatches: WatchClient[] = [];
    for (let i = 0; i < 2; i++) gcWatches.push(await WatchClient.watch(server.url, `/api/v1/namespaces/${NS}/configmaps?labelSelector=${LABEL}&resourceVersion=${watchFrom}`));
    watches.push(...gcWatches);
    await create(server.url, 'gc-dependent', { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'gc-owner', uid: owner.uid }] });
    const del = await fetch(`${server.url}/api/v1/namespaces/${NS}/configmaps/gc-owner`, { method: 'DELETE' });
    assert.equal(del.status, 200);
    for (const w of gcWatches) {
      const got = await changes(w, 3);
      assert.deepEqual(got.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED gc-dependent', 'DELETED gc-owner', 'DELETED gc-dependent']);
      assert.deepEqual(await w.drainFor(500).then((rest) => rest.filter((e) => e.type !== 'BOOKMARK')), []);
    }
  });

  it('replaces a worker that dies: the other takes over its controllers, a new worker serves, clients that retry are served', async () => {
    const before = await server.scrapeEach();
    const leader = before.find((s) => leaders(s.text).get('garbage-collector') === 1);
    assert.ok(leader, 'a worker leads the garbage collector');
    process.kill(leader.pid, 'SIGKILL');
    const after = await eventually(
      async () => {
        const scrapes = await server.scrapeEach();
        return scrapes.length === 2 && !scrapes.some((s) => s.pid === leader.pid) && misElected(scrapes).length === 0 && scrapes;
      },
      { timeoutMs: 90_000, intervalMs: 500, message: 'a new worker serving and every controller led once' },
    );
    for (const s of after) pids.add(s.pid);
    assert.ok(isAlive(before.find((s) => s.pid !== leader.pid)!.pid), 'the other worker kept serving');
    // The replacement was told that every worker serves: both answer /readyz 200.
    await eventually(async () => (await assertEveryWorkerReady(server.url), true), { timeoutMs: 30_000, message: 'both workers ready' });
    assert.ok(!after.some((s) => s.worker === leader.worker), 'the replacement is a new worker');
    // The controllers work on the new leader.
    const owner = (await create(server.url, 'gc-owner-2')) as Written & { uid: string };
    await create(server.url, 'gc-dependent-2', { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'gc-owner-2', uid: owner.uid }] });
    assert.equal((await fetch(`${server.url}/api/v1/namespaces/${NS}/configmaps/gc-owner-2`, { method: 'DELETE' })).status, 200);
    await eventually(async () => (await fetchOnNewConnection(`${server.url}/api/v1/namespaces/${NS}/configmaps/gc-dependent-2`)).status === 404, {
      timeoutMs: 30_000,
      message: 'the dependent collected',
    });
  });

  it('stops every worker and then the embedded PostgreSQL on SIGTERM, exit 0', async () => {
    const workerPids = (await server.scrapeEach()).map((s) => s.pid);
    const postmaster = server.postmasterPid();
    assert.ok(postmaster && isAlive(postmaster), 'the embedded PostgreSQL runs');
    for (const w of watches) w.close();
    server.proc.kill('SIGTERM');
    assert.equal(await server.exited, 0, server.output);
    for (const pid of workerPids) assert.equal(isAlive(pid), false, `worker ${pid} exited`);
    assert.equal(isAlive(postmaster), false, 'PostgreSQL stopped');
    assert.equal(server.postmasterPid(), undefined, 'PostgreSQL shut down cleanly (no postmaster.pid left)');
  });
});
