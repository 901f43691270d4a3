import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ChangeLogRepository, createDatabase } from '@plinth/storage';
import { TestPostgres } from '../support/test-postgres.js';
import { WatchClient, type WatchEvent } from '../watch/support/watch-client.js';
import { ReplicaProcess } from './support/replica-process.js';
import { type LoadOutcome, WriteLoad } from './support/write-load.js';
import { eventually } from '../support/eventually.js';

const NS = 'pgfault';

/** Follows a namespace's configmaps on one replica, re-watching from the last seen revision whenever the stream ends. */
class ResumingWatch {
  readonly events: WatchEvent[] = [];
  private current: WatchClient | undefined;
  private stopped = false;
  private readonly running: Promise<void>;

  constructor(
    private readonly url: string,
    private rv: string,
  ) {
    this.running = this.run();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        const w = await WatchClient.watch(this.url, `/api/v1/namespaces/${NS}/configmaps?resourceVersion=${this.rv}&allowWatchBookmarks=true`);
        this.current = w;
        if (w.status !== 200) throw new Error(`watch answered ${w.status}`);
        for (;;) {
          const e = await w.next(3_600_000).catch(() => undefined);
          if (!e) break;
          if (e.type === 'ERROR') throw new Error(`watch error ${JSON.stringify(e.object)}`);
          this.rv = e.object.metadata.resourceVersion;
          if (e.type !== 'BOOKMARK') this.events.push(e);
        }
      } catch {
        // The replica or its database is away: try again shortly, from the last revision seen.
      }
      this.current?.close();
      if (!this.stopped) await new Promise((r) => setTimeout(r, 200));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.close();
    await this.running;
  }
}

function summary(outcomes: LoadOutcome[]): string {
  const counts = new Map<string, number>();
  for (const o of outcomes) {
    const k = o.status === 0 ? `no answer (${o.error})` : `${o.status} ${o.kind ?? ''} ${o.reason ?? ''}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${k}: ${n}`).join(', ');
}

// A real PostgreSQL of this test's own, SIGKILLed and restarted under write load with two replicas (cluster mode).
describe('fault: PostgreSQL killed and restarted under write load', { timeout: 150_000 }, () => {
  let pg: TestPostgres;
  const replicas: ReplicaProcess[] = [];

  before(async () => {
    const redisUrl = process.env.PLINTH_TEST_REDIS_URL;
    assert.ok(redisUrl, 'PLINTH_TEST_REDIS_URL is not set');
    pg = await TestPostgres.start('pgfault');
    const env = { DATABASE_URL: pg.url, REDIS_URL: redisUrl, PLINTH_WATCH_POLL_INTERVAL_MS: '300' };
    replicas.push(...(await Promise.all([ReplicaProcess.start(env), ReplicaProcess.start(env)])));
    const res = await fetch(`${replicas[0].url}/api/v1/namespaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: NS } }),
    });
    assert.equal(res.status, 201, await res.text());
  });
  after(async () => {
    for (const r of replicas) await r.kill().catch(() => undefined);
    await pg?.close();
  });

  it('no replica exits; the outage gets quick Status answers and failing /readyz; both recover by themselves and watchers lose nothing', async () => {
    const list = await fetch(`${replicas[1].url}/api/v1/namespaces/${NS}/configmaps`);
    const from = ((await list.json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const watch = new ResumingWatch(replicas[1].url, from);
    const load = new WriteLoad(replicas.map((r) => r.url), NS, 4);
    try {
      await eventually(() => load.outcomes.filter((o) => o.status === 201).length >= 20, { timeoutMs: 20_000, message: 'writes succeed before the fault' });

      await pg.kill();
      const down = Date.now();
      for (const r of replicas) {
        await eventually(async () => {
          assert.ok(r.alive, `a replica exited: ${r.output}`);
          return (await r.readyzStatus()) === 503;
        }, { timeoutMs: 15_000, message: `${r.url} /readyz fails while PostgreSQL is down` });
      }
      await eventually(() => load.since(down + 1000).length >= 20, { timeoutMs: 20_000, message: 'requests are answered during the outage' });
      const during = load.since(down + 1000);
      for (const o of during) {
        assert.ok(o.status === 503 || o.status === 500, `during the outage: ${summary(during)}`);
        assert.equal(o.kind, 'Status', summary(during));
      }
      assert.ok(during.some((o) => o.status === 503 && o.reason === 'ServiceUnavailable'), summary(during));

      await pg.restart();
      for (const r of replicas) await eventually(() => r.ready(), { timeoutMs: 30_000, message: `${r.url} ready again` });
      const back = Date.now();
      await eventually(() => load.since(back).filter((o) => o.status === 201).length >= 20, { timeoutMs: 30_000, message: 'writes succeed again on both replicas' });
    } finally {
      await load.stop();
    }
    for (const r of replicas) assert.ok(r.alive, `a replica exited: ${r.output}`);
    const answered = load.outcomes.filter((o) => o.status === 0);
    assert.deepEqual(answered, [], `requests without an answer: ${summary(load.outcomes)}`);

    // Every acknowledged write is there, and the watcher saw exactly the committed changes, in order.
    const db = createDatabase({ connectionString: pg.url, maxConnections: 1 });
    try {
      const committed = (await new ChangeLogRepository(db).changesAfter(Number(from), 100_000)).filter((c) => c.key.namespace === NS);
      const names = new Set(committed.map((c) => c.key.name));
      for (const o of load.outcomes.filter((x) => x.status === 201)) assert.ok(names.has(o.name), `acknowledged ${o.name} is missing`);
      const want = committed.map((c) => c.revision);
      await eventually(() => watch.events.length >= want.length, { timeoutMs: 30_000, message: 'the watcher caught up' });
      await watch.stop();
      assert.deepEqual(
        watch.events.map((e) => Number(e.object.metadata.resourceVersion)),
        want,
      );
    } finally {
      await watch.stop();
      await db.destroy();
    }
  });
});
