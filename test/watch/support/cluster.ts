import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import { pino } from 'pino';
import { loadConfig } from '../../../apps/api/src/config/app-config.js';
import { type RunningServer, startServer } from '../../../apps/api/src/app/server.js';
import { installDefaultCredentials, sharedTestDataDir } from '../../support/credentials.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';
import { WatchService } from '../../../apps/api/src/watch/watch.service.js';
import { eventually } from '../../support/eventually.js';

/** A free loopback TCP port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** Resolves once something accepts connections on loopback `port`; throws after `timeoutMs`. */
async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const accepts = () =>
    new Promise<boolean>((resolve) => {
      const sock = net.connect(port, '127.0.0.1', () => {
        sock.end();
        resolve(true);
      });
      sock.on('error', () => resolve(false));
    });
  await eventually(accepts, { timeoutMs, message: `a listener on port ${port}` });
}

/** A redis-server of a test's own, so it can be killed and restarted without disturbing other tests. */
export class TestRedis {
  private proc: ChildProcess | undefined;
  private constructor(readonly port: number) {}

  /** Starts redis-server on a free port (no persistence: a restart loses the stream, like a failover to an empty Redis). */
  static async start(): Promise<TestRedis> {
    const r = new TestRedis(await freePort());
    await r.restart();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts it again on the same port (no-op while it runs). */
  async restart(): Promise<void> {
    if (this.proc && this.proc.exitCode === null && this.proc.signalCode === null) return;
    const proc = spawn('/usr/bin/redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    this.proc = proc;
    // Never outlive the test file, whatever its hooks did.
    const reap = () => proc.kill('SIGKILL');
    process.once('exit', reap);
    proc.once('exit', () => process.removeListener('exit', reap));
    await waitForPort(this.port, 5000);
  }

  /** Kills it (SIGKILL) and waits for the exit. */
  async kill(): Promise<void> {
    const p = this.proc;
    this.proc = undefined;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
  }
}

/** Several in-process Plinth replicas on one database and one Redis (cluster mode). */
export class TestCluster {
  readonly replicas: RunningServer[] = [];
  private constructor(
    readonly database: TestDatabase,
    readonly redisUrl: string,
    private readonly env: Record<string, string>,
  ) {}

  /** Creates a database and starts `n` replicas on it. */
  static async start(label: string, n: number, redisUrl: string, env: Record<string, string> = {}): Promise<TestCluster> {
    const c = new TestCluster(await createTestDatabase(label), redisUrl, env);
    for (let i = 0; i < n; i++) await c.add();
    return c;
  }

  /** Starts one more replica. */
  async add(): Promise<RunningServer> {
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: this.database.url,
      REDIS_URL: this.redisUrl,
      PLINTH_DB_POOL_SIZE: '5',
      // One data folder for all replicas: one CA, administrator certificate and ServiceAccount key.
      PLINTH_DATA_DIR: sharedTestDataDir(),
      ...this.env,
    });
    const server = await startServer(config, pino({ level: process.env.PLINTH_TEST_LOG ?? 'silent' }));
    installDefaultCredentials(server.pki);
    this.replicas.push(server);
    return server;
  }

  /** The replica that runs the relay, if any. */
  relay(): RunningServer | undefined {
    return this.replicas.find((r) => r.app.get(WatchService).pipeline.isRelay);
  }

  /** Stops one replica gracefully and forgets it. */
  async stopReplica(r: RunningServer): Promise<void> {
    this.replicas.splice(this.replicas.indexOf(r), 1);
    await r.stop();
  }

  /** Stops every replica and drops the database (never throws: it runs in after hooks that must go on). */
  async close(): Promise<void> {
    for (const r of this.replicas.splice(0)) await r.stop().catch(() => undefined);
    await this.database.drop().catch(() => undefined);
  }
}

