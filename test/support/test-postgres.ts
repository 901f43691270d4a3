import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDatabase, type EmbeddedDatabase, migrateToLatest, startEmbeddedPostgres } from '@plinth/storage';
import { freePort } from '../watch/support/cluster.js';
import { migrations } from '../../migrations/index.js';

/**
 * A PostgreSQL of one test's own (the runner's is shared by every file, so
 * it must never be killed): an embedded cluster on a free port in a
 * temporary folder, with a migrated database, that can be killed and
 * restarted on the same port and data.
 */
export class TestPostgres {
  private current: EmbeddedDatabase | undefined;
  private lastUrl = '';
  private constructor(
    private readonly dir: string,
    readonly port: number,
    readonly database: string,
  ) {}

  /** Initialises, starts and migrates a fresh cluster. */
  static async start(label: string): Promise<TestPostgres> {
    const dir = mkdtempSync(path.join(process.env.PLINTH_TEST_TMP ?? os.tmpdir(), `pg-${label}-`));
    // PostgreSQL runs as its own user when the tests run as root: it must reach its data folder.
    chmodSync(dir, 0o755);
    const t = new TestPostgres(dir, await freePort(), `${label}_${randomBytes(3).toString('hex')}`);
    await t.restart();
    const db = createDatabase({ connectionString: t.url, maxConnections: 1 });
    try {
      await migrateToLatest(db, migrations);
    } finally {
      await db.destroy();
    }
    return t;
  }

  /** URL of the test's database (over the Unix socket, as the server uses it). */
  get url(): string {
    return this.lastUrl;
  }

  /** True while it runs. */
  get running(): boolean {
    return this.current !== undefined;
  }

  /** Kills the postmaster (SIGKILL, as a crash). */
  async kill(): Promise<void> {
    const c = this.current;
    this.current = undefined;
    await c?.kill();
  }

  /**
   * Starts it again on the same port and data. Retries for a while: after a
   * SIGKILL the old backends hold the shared memory until they notice.
   */
  async restart(): Promise<void> {
    if (this.current) return;
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        this.current = await startEmbeddedPostgres({
          dataDir: this.dir,
          port: this.port,
          database: this.database,
          extraFlags: ['-c', 'fsync=off', '-c', 'full_page_writes=off'],
          // The runner's choice of PostgreSQL (PLINTH_TEST_PG_BIN), so fault tests can run on an installed one too.
          binDir: process.env.PLINTH_TEST_PG_BIN || undefined,
        });
        this.lastUrl = this.current.url;
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  /** Stops it and removes its data (never throws: runs in after hooks). */
  async close(): Promise<void> {
    const c = this.current;
    this.current = undefined;
    await c?.stop().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
