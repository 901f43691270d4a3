// The light tenant of bench:label-lock, on its own thread: its own event loop
// and its own connections and write batcher, as another replica's writes
// would be. On the benchmark's main thread, the heavy creates' own CPU in
// the storage layer (copying and serialising 100,000 labels) delayed the
// light writes' callbacks, and that was counted as the database's stall.
import { parentPort, workerData } from 'node:worker_threads';
import { createDatabase, createPostgresStorage, singleShard } from '@plinth/storage';

/** What the benchmark hands the thread. */
export interface LightOptions {
  url: string;
  clients: number;
  /** Until when (ms since the epoch) the clients write. */
  until: number;
  /** Prefix of the names it creates (one per phase). */
  tag: string;
  /** Whether its write batcher cleans the GIN pending lists after its writes (the schema of migration 0025). */
  clean: boolean;
}

/** Each write's start (ms since the epoch) and latency (ms). */
export interface LightResult {
  starts: number[];
  latencies: number[];
}

async function run(o: LightOptions): Promise<LightResult> {
  const db = createDatabase({ connectionString: o.url, maxConnections: 8 });
  const storage = createPostgresStorage({ source: singleShard(db), batching: { ginCleanIntervalMs: o.clean ? 250 : -1 } });
  const out: LightResult = { starts: [], latencies: [] };
  let n = 0;
  await Promise.all(
    Array.from({ length: o.clients }, async () => {
      while (Date.now() < o.until) {
        const name = `${o.tag}-${n++}`;
        const start = Date.now();
        const s = performance.now();
        await storage.objects.create({ tenant: 'light', resource: 'configmaps', namespace: 'default', name }, { metadata: { name, namespace: 'default', labels: { app: 'web', tier: String(n % 3), i: String(n) } }, data: { a: 'b' } });
        out.latencies.push(performance.now() - s);
        out.starts.push(start);
      }
    }),
  );
  await db.destroy();
  return out;
}

void run(workerData as LightOptions).then((r) => parentPort?.postMessage(r));
