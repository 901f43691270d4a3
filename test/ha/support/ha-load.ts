import request from 'supertest';
import { pino } from 'pino';
import { loadConfig } from '../../../apps/api/src/config/app-config.js';
import { type RunningServer, startServer } from '../../../apps/api/src/app/server.js';
import { installDefaultCredentials, sharedTestDataDir } from '../../support/credentials.js';
import { WatchClient } from '../../watch/support/watch-client.js';

/** Starts one in-process Plinth replica on `databaseUrl` (cluster mode on `redisUrl`). */
export async function startReplica(databaseUrl: string, redisUrl: string): Promise<RunningServer> {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    PLINTH_DB_POOL_SIZE: '6',
    PLINTH_DATA_DIR: sharedTestDataDir(),
    PLINTH_WATCH_POLL_INTERVAL_MS: '500',
  });
  const server = await startServer(config, pino({ level: process.env.PLINTH_TEST_LOG ?? 'silent' }));
  installDefaultCredentials(server.pki);
  return server;
}

/**
 * Every revision handed out to a client (a write's response, a watch
 * event) with what it named; a revision seen again with other contents is
 * a violation (the bug issue 41 is about).
 */
export class RevisionLedger {
  private readonly contents = new Map<number, string>();
  readonly reused: string[] = [];

  record(revision: number, content: string): void {
    const had = this.contents.get(revision);
    if (had === undefined) this.contents.set(revision, content);
    else if (had !== content) this.reused.push(`${revision}: ${had} / ${content}`);
  }
}

/** What the writers saw. */
export interface WriterStats {
  /** Acknowledged creates: name → revision. */
  acked: Map<string, number>;
  statuses: Map<number, number>;
  /** 503s without a Retry-After header, 5xx other than 503, and requests that took longer than the bound. */
  problems: string[];
  /** Times (ms since epoch) of each acknowledgement. */
  ackTimes: number[];
  /** Each acknowledgement's time and revision. */
  ackLog: [number, number][];
  /** Every request's end (ms since epoch) and how long it took (ms), whatever its outcome. */
  latencies: [number, number][];
}

/**
 * `n` writers per replica creating ConfigMaps `<replica>-<writer>-<i>` in
 * `ns` one after another until `stop()`; a failed create is retried under
 * a new name (its outcome is unknown, so it is not counted).
 */
export function startWriters(replicas: RunningServer[], ns: string, n: number, ledger: RevisionLedger, maxRequestMs = 8000): { stats: WriterStats; stop: () => Promise<void>; pause: () => Promise<void>; resume: () => void } {
  const stats: WriterStats = { acked: new Map(), statuses: new Map(), problems: [], ackTimes: [], ackLog: [], latencies: [] };
  let stopped = false;
  let paused: Promise<void> | undefined;
  let unpause: () => void = () => undefined;
  let busy = 0;
  const loops: Promise<void>[] = [];
  replicas.forEach((r, ri) => {
    for (let w = 0; w < n; w++) {
      loops.push(
        (async () => {
          for (let i = 0; !stopped; i++) {
            if (paused) await paused;
            if (stopped) break;
            const name = `r${ri}-w${w}-${i}`;
            const started = Date.now();
            let res: request.Response;
            busy++;
            try {
              res = await request(r.url).post(`/api/v1/namespaces/${ns}/configmaps`).timeout(maxRequestMs).send({ metadata: { name }, data: { v: name } });
            } catch (err) {
              stats.problems.push(`${name}: no answer within ${maxRequestMs} ms (${(err as Error).message}), sent at ${new Date(started).toISOString()}`);
              stats.latencies.push([Date.now(), Date.now() - started]);
              continue;
            } finally {
              busy--;
            }
            stats.latencies.push([Date.now(), Date.now() - started]);
            stats.statuses.set(res.status, (stats.statuses.get(res.status) ?? 0) + 1);
            if (res.status === 201) {
              const rv = Number(res.body.metadata.resourceVersion);
              stats.acked.set(name, rv);
              stats.ackTimes.push(Date.now());
              stats.ackLog.push([Date.now(), rv]);
              ledger.record(rv, `${name}=${name}`);
            } else if (res.status === 503) {
              if (!res.headers['retry-after']) stats.problems.push(`${name}: 503 without Retry-After`);
              await new Promise((s) => setTimeout(s, 100));
            } else {
              stats.problems.push(`${name}: ${res.status} ${res.text.slice(0, 300)} after ${Date.now() - started} ms`);
              await new Promise((s) => setTimeout(s, 100));
            }
          }
        })(),
      );
    }
  });
  return {
    stats,
    stop: async () => {
      stopped = true;
      unpause();
      await Promise.all(loops);
    },
    /** Resolves once no write is in flight and none starts until resume(). */
    pause: async () => {
      paused ??= new Promise<void>((r) => (unpause = r));
      while (busy > 0) await new Promise((r) => setTimeout(r, 50));
    },
    resume: () => {
      paused = undefined;
      unpause();
    },
  };
}

/**
 * A client-go style informer on one replica: lists, watches from the
 * list's revision, re-watches from the last revision when the stream ends,
 * relists on 410 Expired. Keeps its cache of objects by name.
 */
export class Informer {
  readonly store = new Map<string, { rv: number; v: string }>();
  expired = 0;
  relists = 0;
  private stopped = false;
  private current: WatchClient | undefined;
  private readonly done: Promise<void>;

  constructor(
    private readonly base: string,
    private readonly ns: string,
    private readonly ledger: RevisionLedger,
  ) {
    this.done = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.close();
    await this.done;
  }

  private async list(): Promise<number | undefined> {
    try {
      const res = await request(this.base).get(`/api/v1/namespaces/${this.ns}/configmaps`).timeout(8000);
      if (res.status !== 200) return undefined;
      this.store.clear();
      for (const item of res.body.items as { metadata: { name: string; resourceVersion: string }; data: { v: string } }[]) {
        this.store.set(item.metadata.name, { rv: Number(item.metadata.resourceVersion), v: item.data.v });
      }
      this.relists++;
      return Number(res.body.metadata.resourceVersion);
    } catch {
      return undefined;
    }
  }

  private async run(): Promise<void> {
    let rv: number | undefined;
    while (!this.stopped) {
      if (rv === undefined) {
        rv = await this.list();
        if (rv === undefined) {
          await new Promise((s) => setTimeout(s, 200));
          continue;
        }
      }
      let w: WatchClient;
      try {
        w = await WatchClient.watch(this.base, `/api/v1/namespaces/${this.ns}/configmaps?resourceVersion=${rv}&allowWatchBookmarks=true`);
      } catch {
        await new Promise((s) => setTimeout(s, 200));
        continue;
      }
      this.current = w;
      if (w.status === 410) {
        this.expired++;
        rv = undefined;
        continue;
      }
      if (w.status !== 200) {
        w.close();
        await new Promise((s) => setTimeout(s, 200));
        continue;
      }
      while (!this.stopped) {
        let e;
        try {
          e = await w.next(500);
        } catch {
          if (w.isEnded) break;
          continue;
        }
        if (e.type === 'ERROR') {
          if (e.object?.code === 410) {
            this.expired++;
            rv = undefined;
          }
          break;
        }
        const erv = Number(e.object.metadata.resourceVersion);
        if (e.type !== 'BOOKMARK') {
          const name = e.object.metadata.name as string;
          if (e.type === 'DELETED') this.store.delete(name);
          else this.store.set(name, { rv: erv, v: e.object.data?.v });
          this.ledger.record(erv, e.type === 'DELETED' ? `deleted ${name}` : `${name}=${e.object.data?.v}`);
        }
        rv = erv;
      }
      w.close();
    }
  }
}
