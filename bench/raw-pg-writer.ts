/**
 * The raw PostgreSQL peer of bench:failover: `n` bare `pg` clients, each
 * inserting one row at a time into a table of its own database, that
 * follow the primary the simplest way a client can (on any error, try
 * each node's own URL in turn, 500 ms to connect, until one is not in
 * recovery). Its first acknowledgement after a fault is what the cluster
 * itself allows (with synchronous_mode_strict, a commit on a new primary
 * also waits for a standby to stream from it); what Plinth takes beyond it
 * is Plinth's.
 */
import pg from 'pg';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class RawPgWriter {
  /** Each acknowledged insert: its time (ms since epoch) and the index of the node that acknowledged it. */
  readonly acks: [number, number][] = [];
  private stopped = false;
  private readonly loops: Promise<void>[] = [];

  private constructor(private readonly nodeUrls: string[]) {}

  /** Creates the peer's table through `setupUrl` and starts `n` writers. */
  static async start(setupUrl: string, nodeUrls: string[], n = 2): Promise<RawPgWriter> {
    const c = new pg.Client({ connectionString: setupUrl });
    await c.connect();
    await c.query('CREATE TABLE IF NOT EXISTS failover_peer (id bigserial PRIMARY KEY, writer int NOT NULL, at timestamptz NOT NULL DEFAULT now())');
    await c.end();
    const w = new RawPgWriter(nodeUrls);
    for (let i = 0; i < n; i++) w.loops.push(w.run(i));
    return w;
  }

  /** The time of the first acknowledgement by node `node` at or after `t` (undefined when none). */
  firstAckOn(node: number, t: number): number | undefined {
    return this.acks.find(([at, n]) => at >= t && n === node)?.[0];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  private async connectPrimary(): Promise<{ c: pg.Client; node: number } | undefined> {
    for (const [node, url] of this.nodeUrls.entries()) {
      const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 500, query_timeout: 2000 });
      c.on('error', () => undefined);
      try {
        await c.connect();
        const { rows } = await c.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
        if (!rows[0].r) return { c, node };
      } catch {
        // Down, frozen or refusing: the next node.
      }
      await c.end().catch(() => undefined);
    }
    return undefined;
  }

  private async run(writer: number): Promise<void> {
    let c: pg.Client | undefined;
    let node = -1;
    while (!this.stopped) {
      if (!c) {
        const found = await this.connectPrimary();
        if (!found) {
          await sleep(100);
          continue;
        }
        ({ c, node } = found);
      }
      try {
        await c.query('INSERT INTO failover_peer (writer) VALUES ($1)', [writer]);
        this.acks.push([Date.now(), node]);
      } catch {
        await c.end().catch(() => undefined);
        c = undefined;
      }
    }
    await c?.end().catch(() => undefined);
  }
}
