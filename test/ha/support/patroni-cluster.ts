import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { connectSession } from '@plinth/storage';
import { eventually } from '../../support/eventually.js';
import { freePort } from '../../watch/support/cluster.js';

const run = promisify(execFile);
const PG_BIN = '/usr/lib/postgresql/15/bin';

/** Whether the Debian packages the HA tests need are installed (postgresql-15, patroni, etcd-server). */
export function patroniInstalled(): boolean {
  return existsSync(`${PG_BIN}/postgres`) && existsSync('/usr/bin/patroni') && existsSync('/usr/bin/etcd');
}

/** One PostgreSQL node under Patroni. */
export interface PatroniNode {
  name: string;
  pgPort: number;
  restPort: number;
  proc?: ChildProcess;
  dataDir: string;
}

/** Options of {@link PatroniCluster.start}. */
export interface PatroniClusterOptions {
  /** Patroni's synchronous_mode (a commit waits for a synchronous standby). */
  synchronous: boolean;
  /** Patroni's synchronous_mode_strict: with no synchronous standby, writes wait rather than go on unreplicated. */
  strict?: boolean;
  nodes?: number;
  /** Patroni's ttl, loop_wait and retry_timeout in seconds (default 6, 1, 2; Patroni's own defaults are 30, 10, 10). */
  timings?: { ttl: number; loopWait: number; retryTimeout: number };
}

/** The `postgres` system user when running as root (PostgreSQL refuses to run as root). */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * etcd plus N PostgreSQL 15 servers under Patroni on loopback ports in a
 * temporary folder: Patroni's short timings (ttl 6 s, loop_wait 1 s), a
 * killed primary fails over rather than restarts in place
 * (`primary_start_timeout: 0`), `maximum_lag_on_failover` large so that an
 * asynchronous standby that fell behind is still promoted (the case that
 * loses commits), pg_rewind for a demoted primary.
 */
export class PatroniCluster {
  readonly nodes: PatroniNode[] = [];
  private etcd: ChildProcess | undefined;
  private etcdPort = 0;
  private constructor(
    readonly dir: string,
    private readonly opts: PatroniClusterOptions,
  ) {}

  /** Starts etcd and the nodes; resolves once a primary accepts writes and every standby streams. */
  static async start(opts: PatroniClusterOptions): Promise<PatroniCluster> {
    const dir = mkdtempSync('/tmp/plinth-patroni-');
    const c = new PatroniCluster(dir, opts);
    // A killed Patroni leaves its PostgreSQL running: never let one outlive the test process (a timed-out file skips its hooks).
    const reapPostgres = () => {
      for (const n of c.nodes) {
        const pid = c.postmasterPid(n);
        if (pid) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // Gone already.
          }
        }
      }
    };
    process.once('exit', reapPostgres);
    const owner = postgresUser();
    if (owner) chownSync(dir, owner.uid, owner.gid);
    try {
      await c.startEtcd();
      const n = opts.nodes ?? 3;
      for (let i = 0; i < n; i++) c.nodes.push({ name: `pg${i}`, pgPort: await freePort(), restPort: await freePort(), dataDir: path.join(dir, `pg${i}`) });
      // The first node bootstraps alone (initdb); the others clone it with pg_basebackup.
      c.startNode(c.nodes[0]);
      await eventually(async () => (await c.primary()) === 'pg0', { timeoutMs: 60_000, message: 'pg0 bootstrapped as primary' });
      for (const node of c.nodes.slice(1)) c.startNode(node);
      await c.waitHealthy(90_000);
    } catch (err) {
      await c.stop();
      throw err;
    }
    return c;
  }

  private haproxy: ChildProcess | undefined;
  /** The port HAProxy listens on for the primary (after {@link startHaproxy}). */
  haproxyPort = 0;

  /**
   * Starts HAProxy in front of the nodes, routing to the one whose Patroni
   * REST API answers `/primary` with 200 (checked every second; sessions to
   * a node marked down are cut), as Patroni's documentation deploys it.
   */
  async startHaproxy(): Promise<void> {
    this.haproxyPort = await freePort();
    const servers = this.nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.pgPort} check port ${n.restPort}`).join('\n');
    const cfg = `global
  maxconn 1000
defaults
  mode tcp
  timeout connect 2s
  timeout client 30m
  timeout server 30m
  timeout check 1s
listen primary
  bind 127.0.0.1:${this.haproxyPort}
  option httpchk OPTIONS /primary
  http-check expect status 200
  default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions
${servers}
`;
    const file = path.join(this.dir, 'haproxy.cfg');
    writeFileSync(file, cfg);
    const log = openSync(path.join(this.dir, 'haproxy.log'), 'a');
    this.haproxy = spawn('/usr/sbin/haproxy', ['-f', file, '-db'], { stdio: ['ignore', log, log] });
    reapOnExit(this.haproxy);
    // HAProxy counts every server up until its first checks: wait until they ran (a standby marked down).
    await eventually(async () => {
      for (let i = 0; i < 5; i++) {
        try {
          const c = await connectSession(this.haproxyUrl('postgres'), { connectionTimeoutMillis: 1000 });
          await c.end();
        } catch {
          return false;
        }
      }
      return true;
    }, { timeoutMs: 20_000, message: 'HAProxy routing to the primary only' });
  }

  /** The URL through HAProxy (one host; `target_session_attrs=read-write` still checks each session's server). */
  haproxyUrl(database = 'postgres'): string {
    return `postgres://postgres:pw@127.0.0.1:${this.haproxyPort}/${database}?target_session_attrs=read-write`;
  }

  /** `postgres://…@h1:p1,h2:p2,h3:p3/postgres?target_session_attrs=read-write`, or one node's URL. */
  url(database = 'postgres', attrs = 'read-write'): string {
    const hosts = this.nodes.map((n) => `127.0.0.1:${n.pgPort}`).join(',');
    return `postgres://postgres:pw@${hosts}/${database}?target_session_attrs=${attrs}`;
  }

  /** The URL of one node only. */
  nodeUrl(name: string, database = 'postgres'): string {
    const n = this.node(name);
    return `postgres://postgres:pw@127.0.0.1:${n.pgPort}/${database}`;
  }

  node(name: string): PatroniNode {
    const n = this.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`no node ${name}`);
    return n;
  }

  private async startEtcd(): Promise<void> {
    this.etcdPort = await freePort();
    const peer = await freePort();
    const data = path.join(this.dir, 'etcd');
    const log = openSync(path.join(this.dir, 'etcd.log'), 'a');
    this.etcd = spawn('/usr/bin/etcd', [
      '--name', 'e0', '--data-dir', data,
      '--listen-client-urls', `http://127.0.0.1:${this.etcdPort}`, '--advertise-client-urls', `http://127.0.0.1:${this.etcdPort}`,
      '--listen-peer-urls', `http://127.0.0.1:${peer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
      '--initial-cluster', `e0=http://127.0.0.1:${peer}`, '--enable-v2=true', '--unsafe-no-fsync',
    ], { stdio: ['ignore', log, log] });
    reapOnExit(this.etcd);
    await eventually(async () => {
      const r = await fetch(`http://127.0.0.1:${this.etcdPort}/health`).catch(() => undefined);
      return r?.ok === true;
    }, { timeoutMs: 20_000, message: 'etcd healthy' });
  }

  private config(node: PatroniNode): string {
    const yml = `scope: plinth-ha
namespace: /plinth/
name: ${node.name}
log:
  level: ${process.env.PLINTH_HA_PATRONI_LOG ?? 'WARNING'}
restapi:
  listen: 127.0.0.1:${node.restPort}
  connect_address: 127.0.0.1:${node.restPort}
etcd3:
  hosts: 127.0.0.1:${this.etcdPort}
bootstrap:
  dcs:
    ttl: ${this.opts.timings?.ttl ?? 6}
    loop_wait: ${this.opts.timings?.loopWait ?? 1}
    retry_timeout: ${this.opts.timings?.retryTimeout ?? 2}
    primary_start_timeout: 0
    maximum_lag_on_failover: 1073741824
    synchronous_mode: ${this.opts.synchronous ? 'true' : 'false'}
    synchronous_mode_strict: ${this.opts.strict ? 'true' : 'false'}
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_level: replica
        hot_standby: 'on'
        wal_log_hints: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
        max_connections: 200
        wal_keep_size: 256MB
  initdb:
    - encoding: UTF8
    - auth: trust
postgresql:
  listen: 127.0.0.1:${node.pgPort}
  connect_address: 127.0.0.1:${node.pgPort}
  data_dir: ${node.dataDir}
  bin_dir: ${PG_BIN}
  pgpass: ${path.join(this.dir, `${node.name}.pgpass`)}
  authentication:
    replication:
      username: replicator
      password: rep
    superuser:
      username: postgres
      password: pw
    rewind:
      username: postgres
      password: pw
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
  parameters:
    unix_socket_directories: '${this.dir}'
    fsync: 'off'
    shared_buffers: 32MB
    log_line_prefix: '%m [%p] %a '
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
`;
    const file = path.join(this.dir, `${node.name}.yml`);
    writeFileSync(file, yml);
    return file;
  }

  /** Starts (or restarts) a node's Patroni. */
  startNode(node: PatroniNode): void {
    const file = this.config(node);
    const owner = postgresUser();
    if (owner) chownSync(file, owner.uid, owner.gid);
    const log = openSync(path.join(this.dir, `${node.name}.log`), 'a');
    if (owner) chownSync(path.join(this.dir, `${node.name}.log`), owner.uid, owner.gid);
    node.proc = spawn('/usr/bin/patroni', [file], { stdio: ['ignore', log, log], cwd: this.dir, ...(owner ?? {}), env: { ...process.env, HOME: this.dir, PATH: `${PG_BIN}:${process.env.PATH}` } });
    reapOnExit(node.proc);
  }

  /** Patroni's REST view of a node (`/patroni`), or undefined when it does not answer. */
  async status(node: PatroniNode): Promise<{ role?: string; state?: string; timeline?: number } | undefined> {
    try {
      const r = await fetch(`http://127.0.0.1:${node.restPort}/patroni`, { signal: AbortSignal.timeout(1000) });
      return (await r.json()) as { role?: string; state?: string; timeline?: number };
    } catch {
      return undefined;
    }
  }

  /** The name of the node that answers Patroni's `/primary` check with 200, if any. */
  async primary(): Promise<string | undefined> {
    for (const n of this.nodes) {
      try {
        const r = await fetch(`http://127.0.0.1:${n.restPort}/primary`, { signal: AbortSignal.timeout(1000) });
        if (r.status === 200) return n.name;
      } catch {
        // Down or frozen.
      }
    }
    return undefined;
  }

  /**
   * Resolves once there is a primary, every node runs and, in synchronous
   * mode, Patroni names a synchronous standby (its /sync key): until then
   * (a new primary's first loops) Patroni promotes no standby if the
   * primary fails, as none is known to have every acknowledged commit.
   */
  async waitHealthy(timeoutMs = 60_000): Promise<void> {
    await eventually(async () => {
      const primary = await this.primary();
      if (!primary) return false;
      for (const n of this.nodes) {
        const s = await this.status(n);
        if (s?.state !== 'running') return false;
      }
      if (!this.opts.synchronous) return true;
      try {
        const r = await fetch(`http://127.0.0.1:${this.node(primary).restPort}/cluster`, { signal: AbortSignal.timeout(1000) });
        const { members } = (await r.json()) as { members: { role: string }[] };
        return members.some((m) => m.role === 'sync_standby');
      } catch {
        return false;
      }
    }, { timeoutMs, message: 'every Patroni node running with a primary (and a synchronous standby)' });
  }

  /** `patronictl switchover` to `candidate` (or any), now. */
  async switchover(candidate?: string): Promise<void> {
    const leader = await this.primary();
    const args = ['-c', path.join(this.dir, 'pg0.yml'), 'switchover', '--force', '--leader', leader ?? '', ...(candidate ? ['--candidate', candidate] : [])];
    const owner = postgresUser();
    await run('/usr/bin/patronictl', args, { cwd: this.dir, ...(owner ?? {}), env: { ...process.env, HOME: this.dir } });
  }

  /** The postmaster's pid of a node (from its data folder), or undefined. */
  postmasterPid(node: PatroniNode): number | undefined {
    try {
      return Number(readFileSync(path.join(node.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    } catch {
      return undefined;
    }
  }

  /** Sends `signal` to a node's Patroni and its PostgreSQL (every process of the postmaster's group of children too). */
  async signalNode(node: PatroniNode, signal: NodeJS.Signals, { patroni = true, postgres = true } = {}): Promise<void> {
    const pids: number[] = [];
    if (patroni && node.proc?.pid) pids.push(node.proc.pid);
    const pm = postgres ? this.postmasterPid(node) : undefined;
    if (pm) {
      pids.push(pm);
      try {
        const { stdout } = await run('pgrep', ['-P', String(pm)]);
        pids.push(...stdout.split('\n').filter(Boolean).map(Number));
      } catch {
        // No children.
      }
    }
    for (const pid of pids) {
      try {
        process.kill(pid, signal);
      } catch {
        // Gone already.
      }
    }
  }

  /** Stops everything and removes the folder (never throws). */
  async stop(): Promise<void> {
    for (const n of this.nodes) await this.signalNode(n, 'SIGCONT').catch(() => undefined);
    for (const n of this.nodes) await this.signalNode(n, 'SIGKILL').catch(() => undefined);
    this.etcd?.kill('SIGKILL');
    this.haproxy?.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    if (!process.env.PLINTH_KEEP_HA_DIR) rmSync(this.dir, { recursive: true, force: true });
  }
}

function reapOnExit(proc: ChildProcess): void {
  const reap = () => proc.kill('SIGKILL');
  process.once('exit', reap);
  proc.once('exit', () => process.removeListener('exit', reap));
}
