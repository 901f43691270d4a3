import { Inject, Injectable } from '@nestjs/common';
import { type Database, DEFAULT_SHARD, probeDatabase } from '@plinth/storage';
import { DATABASE } from '../database/database-connection.js';
import { GracefulShutdown } from '../lifecycle/graceful-shutdown.js';
import { Metrics } from '../observability/metrics.js';
import { WatchService } from '../watch/watch.service.js';
import { ShardPool } from '../sharding/shard-pool.js';
import { type DynamicEncryption, ENCRYPTION } from '../encryption/dynamic-encryption.js';
import { workerSiblings } from './worker-siblings.js';

/** A plain-text health answer. */
export interface HealthAnswer {
  code: number;
  contentType: string;
  body: string;
}

const TEXT = 'text/plain; charset=utf-8';

/** /healthz, /livez, /readyz and /metrics, as kube-apiserver answers them; served over HTTPS and by the optional plain listener. */
@Injectable()
export class HealthService {
  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(WatchService) private readonly watch: WatchService,
    @Inject(GracefulShutdown) private readonly shutdown: GracefulShutdown,
    @Inject(Metrics) private readonly metrics: Metrics,
    @Inject(ShardPool) private readonly shards: ShardPool,
    @Inject(ENCRYPTION) private readonly encryption: DynamicEncryption | null,
  ) {}

  /**
   * Upstream's `kms-providers` check: the last Status call of every KMS v2
   * provider in force said healthz `ok`, version v2 and a key_id; undefined
   * when none is configured.
   */
  kmsProviders(): HealthCheck | undefined {
    const providers = this.encryption?.kmsProviders() ?? [];
    if (providers.length === 0) return undefined;
    const failed = providers.filter((p) => !p.status.healthy);
    if (failed.length === 0) return { name: 'kms-providers', ok: true };
    return { name: 'kms-providers', ok: false, detail: failed.map((p) => p.status.error).join('; ') };
  }

  /** /healthz and /livez: the process answers (one check, `ping`). */
  liveness(verbose = false, root = 'livez'): HealthAnswer {
    return renderChecks(root, [{ name: 'ping', ok: true }], verbose, () => false);
  }

  /**
   * The checks of /readyz: failing unless this replica cannot serve
   * correctly (shutting down, PostgreSQL unreachable, the watch pipeline
   * broken, or, in a worker process, not every worker of the host serving
   * yet). A degraded dependency (Redis down while the PostgreSQL fallback
   * serves watches, a shard other than the platform's own down) keeps the
   * check passing with a `degraded` detail.
   */
  async readinessChecks(): Promise<HealthCheck[]> {
    const checks: HealthCheck[] = [];
    if (this.shutdown.shuttingDown) checks.push({ name: 'shutdown', ok: false });
    checks.push((await probeDatabase(this.db)) ? { name: 'database', ok: true } : { name: 'database', ok: false, detail: 'PostgreSQL is unreachable' });
    const watchProblems = await this.watch.readiness().catch((err: Error) => [err.message]);
    checks.push({ name: 'watch-pipeline', ok: watchProblems.length === 0, detail: watchProblems.join('; ') || undefined });
    const degraded = await this.watch.degradations();
    checks.push({ name: 'watch-fanout', ok: true, detail: degraded.length > 0 ? `degraded: ${degraded.join('; ')}` : undefined });
    const kms = this.kmsProviders();
    if (kms) checks.push(kms);
    const workers = workerSiblings.readyzLine();
    if (workers) checks.push({ name: 'workers', ok: workers.ok, detail: workers.ok ? undefined : 'not every worker process of this host serves yet' });
    // Other shards do not make the replica unready: only their own tenants are refused while one is down.
    for (const s of this.shards.states()) {
      // What each shard's primary promises about an acknowledged write (informational, never unready).
      if (s.durability) checks.push({ name: `shard-${s.name}-durability`, ok: true, detail: s.durability.message });
      if (s.name === DEFAULT_SHARD) continue;
      checks.push({ name: `shard-${s.name}`, ok: true, detail: s.ready ? undefined : `degraded: ${s.error ?? 'not connected'}; its tenants get 503` });
    }
    return checks;
  }

  /**
   * /readyz as kube-apiserver answers it: `ok` when every check passes,
   * else (and under `?verbose`) one line per check and `readyz check
   * passed|failed`. A check's detail (error text of a driver, a plugin, a
   * shard: it may carry host names, users, file paths) is printed only when
   * `mayDetail(check)` says the caller may read that check alone (its
   * `/readyz/<name>` path); otherwise, as upstream, `[+]name ok` or
   * `[-]name failed: reason withheld`.
   */
  async readiness(verbose = false, mayDetail: (check: string) => boolean = () => false): Promise<HealthAnswer> {
    return this.renderReadiness(await this.readinessChecks(), verbose, mayDetail);
  }

  /** The /readyz answer over `checks` (from {@link readinessChecks}), as {@link readiness} renders it. Pure. */
  renderReadiness(checks: HealthCheck[], verbose: boolean, mayDetail: (check: string) => boolean): HealthAnswer {
    return renderChecks('readyz', checks, verbose, mayDetail);
  }

  /** /readyz/`name`: `ok`, or the check's line (its detail when `detailed`) and 500; undefined for no such check. */
  async readinessCheck(name: string, detailed = false): Promise<HealthAnswer | undefined> {
    const check = (await this.readinessChecks()).find((c) => c.name === name);
    if (!check) return undefined;
    if (check.ok) return { code: 200, contentType: TEXT, body: 'ok' };
    return { code: 500, contentType: TEXT, body: `${checkLine(check, detailed)}\nhealthz check failed` };
  }

  /** /metrics in the Prometheus text format. */
  async metricsText(): Promise<HealthAnswer> {
    return { code: 200, contentType: this.metrics.registry.contentType, body: await this.metrics.registry.metrics() };
  }

  /**
   * The answer of the plain loopback listener for one of the health paths
   * (`verbose`: the `?verbose` query), or undefined for any other path. Its
   * callers are not authenticated: no check's detail is shown.
   */
  async answer(path: string, verbose = false): Promise<HealthAnswer | undefined> {
    if (path === '/healthz' || path === '/livez') return this.liveness(verbose, path.slice(1));
    if (path === '/readyz') return this.readiness(verbose);
    if (path === '/readyz/kms-providers') return (await this.readinessCheck('kms-providers')) ?? { code: 404, contentType: TEXT, body: 'no such health check: "kms-providers"' };
    if (path === '/metrics') return this.metricsText();
    return undefined;
  }
}

/** One named health check: passing or not, and what it found (never shown to callers who may not read the check alone). */
export interface HealthCheck {
  name: string;
  ok: boolean;
  detail?: string;
}

function checkLine(c: HealthCheck, detailed: boolean): string {
  if (c.ok) return detailed && c.detail ? `[+]${c.name} ok (${c.detail})` : `[+]${c.name} ok`;
  return `[-]${c.name} failed: ${detailed ? (c.detail ?? 'reason withheld') : 'reason withheld'}`;
}

/** kube-apiserver's root health answer over `checks`: `ok`, or every check's line and `<root> check passed|failed` (verbose or failing; 503 when failing). */
function renderChecks(root: string, checks: HealthCheck[], verbose: boolean, mayDetail: (check: string) => boolean): HealthAnswer {
  const ok = checks.every((c) => c.ok);
  if (ok && !verbose) return { code: 200, contentType: TEXT, body: 'ok' };
  const lines = checks.map((c) => checkLine(c, mayDetail(c.name)));
  return { code: ok ? 200 : 503, contentType: TEXT, body: `${lines.join('\n')}\n${root} check ${ok ? 'passed' : 'failed'}` };
}
