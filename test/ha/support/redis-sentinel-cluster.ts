import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { eventually } from '../../support/eventually.js';
import { freePort } from '../../watch/support/cluster.js';

/** The master group name the Sentinels monitor. */
export const MASTER_NAME = 'plinth-ha';

/**
 * Whether Redis is installed (Debian `redis-server`). Sentinels run as
 * `redis-server <conf> --sentinel`, what Debian's `redis-sentinel` (a link
 * to the same binary) runs too, so that package is not needed.
 */
export function sentinelInstalled(): boolean {
  return existsSync('/usr/bin/redis-server');
}

/** Runs one command on loopback `port` on a connection of its own (no retries) and resolves with the reply. */
export async function redisCommand(port: number, ...args: string[]): Promise<unknown> {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.call(args[0], ...args.slice(1));
  } finally {
    client.disconnect();
  }
}

/**
 * A Redis master, one replica and three Sentinels (`redis-server`, and
 * `redis-server --sentinel`) on loopback ephemeral ports, their configuration in a
 * temporary folder; the Sentinels declare the master down after 1 s and
 * fail over at once. No persistence: what a killed master had not sent to
 * its replica is gone, as with asynchronous replication anywhere.
 */
export class SentinelCluster {
  private readonly procs = new Map<number, ChildProcess>();

  private constructor(
    private readonly dir: string,
    /** The data nodes' ports: [first master, first replica]. */
    readonly dataPorts: number[],
    readonly sentinelPorts: number[],
  ) {}

  /** Starts the data nodes, waits for the replica to sync, then the Sentinels, and waits until all three know the replica. */
  static async start(): Promise<SentinelCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'plinth-sentinel-'));
    const ports = [await freePort(), await freePort()];
    const sentinels = [await freePort(), await freePort(), await freePort()];
    const c = new SentinelCluster(dir, ports, sentinels);
    const data = (port: number, extra: string[]) => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--dbfilename', `dump-${port}.rdb`, ...extra];
    c.spawn(ports[0], '/usr/bin/redis-server', data(ports[0], []));
    c.spawn(ports[1], '/usr/bin/redis-server', data(ports[1], ['--replicaof', '127.0.0.1', String(ports[0])]));
    await eventually(async () => /master_link_status:up/.test(String(await redisCommand(ports[1], 'INFO', 'replication').catch(() => ''))), { timeoutMs: 10_000, message: 'the replica in sync' });
    for (const port of sentinels) {
      const conf = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${ports[0]} 2`,
          `sentinel down-after-milliseconds ${MASTER_NAME} 1000`,
          `sentinel failover-timeout ${MASTER_NAME} 3000`,
          `sentinel parallel-syncs ${MASTER_NAME} 1`,
          '',
        ].join('\n'),
      );
      c.spawn(port, '/usr/bin/redis-server', [conf, '--sentinel']);
    }
    for (const port of sentinels) {
      // A failover needs the replica known and a majority of Sentinels that know each other (they meet every 2 s).
      await eventually(async () => (await c.sentinelKnowsReplica(port)) && ((await redisCommand(port, 'SENTINEL', 'sentinels', MASTER_NAME).catch(() => [])) as unknown[]).length === 2, {
        timeoutMs: 15_000,
        message: `Sentinel ${port} knows the replica and the other Sentinels`,
      });
    }
    return c;
  }

  /** `redis+sentinel://` naming the three Sentinels and the master. */
  get url(): string {
    return `redis+sentinel://${this.sentinelPorts.map((p) => `127.0.0.1:${p}`).join(',')}/${MASTER_NAME}`;
  }

  /** The port of the master the Sentinels name now (asked of the first one that answers). */
  async masterPort(): Promise<number> {
    for (const port of this.sentinelPorts) {
      const reply = await redisCommand(port, 'SENTINEL', 'get-master-addr-by-name', MASTER_NAME).catch(() => undefined);
      if (Array.isArray(reply) && reply.length === 2) return Number(reply[1]);
    }
    throw new Error('no Sentinel named the master');
  }

  /** Sends `signal` to the data node or Sentinel on `port`; SIGKILL waits for the exit. */
  async signal(port: number, signal: NodeJS.Signals): Promise<void> {
    const p = this.procs.get(port);
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = signal === 'SIGKILL' ? new Promise((r) => p.once('exit', r)) : undefined;
    p.kill(signal);
    await exited;
  }

  /** Kills every process and removes the folder. */
  async stop(): Promise<void> {
    for (const port of this.procs.keys()) {
      await this.signal(port, 'SIGCONT');
      await this.signal(port, 'SIGKILL');
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async sentinelKnowsReplica(port: number): Promise<boolean> {
    const reply = await redisCommand(port, 'SENTINEL', 'replicas', MASTER_NAME).catch(() => []);
    return JSON.stringify(reply).includes(`"port","${this.dataPorts[1]}"`);
  }

  private spawn(port: number, bin: string, args: string[]): void {
    const proc = spawn(bin, args, { stdio: 'ignore' });
    this.procs.set(port, proc);
    // Never outlive the test file, whatever its hooks did.
    const reap = () => proc.kill('SIGKILL');
    process.once('exit', reap);
    proc.once('exit', () => process.removeListener('exit', reap));
  }
}
