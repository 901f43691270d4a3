import { Inject, Injectable } from '@nestjs/common';
import { type Database, DEFAULT_SHARD, probeDatabase } from '@plinth/storage';
import { DATABASE } from '../database/database.module.js';
import { GracefulShutdown } from '../lifecycle/graceful-shutdown.js';
import { Metrics } from '../observability/metrics.js';
import { WatchService } from '../watch/watch.service.js';
import { ShardPool } from '../shards/shard-pool.js';
import type { DynamicEncryption } from '../encryption/dynamic-encryption.js';
import { ENCRYPTION } from '../encryption/encryption.module.js';
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
  kmsProviders(): { ok: boolean; line: string } | undefined {
    const providers = this.encryption?.kmsProviders() ?? [];
    if (providers.length === 0) return undefined;
    const failed = providers.filter((p) => !p.status.healthy);
    if (failed.length === 0) return { ok: true, line: '[+]kms-providers ok' };
    return { ok: false, line: `[-]kms-providers failed: ${failed.map((p) => p.status.error).join('; ')}` };
  }

  /** /healthz and /livez: the process answers. */
  liveness(): HealthAnswer {
    return { code: 200, contentType: TEXT, body: 'ok' };
  }

  /**
   * /readyz: ready unless this replica cannot serve correctly (shutting
   * down, PostgreSQL unreachable, the watch pipeline broken, or, in a
   * worker process, not every worker of the host serving yet). A degraded
   * dependency (Redis down while the PostgreSQL fallback serves watches)
   * keeps it ready and shows as a `[+]… ok (degraded: …)` line under
   * `?verbose`, as kube-apiserver lists its checks; so does a shard other
 * than the platform's own that is down (`[+]shard-<name> ok (degraded: …)`).
   */
  async readiness(verbose = false): Promise<HealthAnswer> {
    const lines: string[] = [];
    let ok = true;
    if (this.shutdown.shuttingDown) {
      ok = false;
      lines.push('[-]shutdown failed: reason withheld');
    }
    if (await probeDatabase(this.db)) lines.push('[+]database ok');
    else {
      ok = false;
      lines.push('[-]database failed: PostgreSQL is unreachable');
    }
    const watchProblems = await this.watch.readiness().catch((err: Error) => [err.message]);
    if (watchProblems.length > 0) {
      ok = false;
      lines.push(`[-]watch-pipeline failed: ${watchProblems.join('; ')}`);
    } else lines.push('[+]watch-pipeline ok');
    const degraded = await this.watch.degradations();
    lines.push(degraded.length > 0 ? `[+]watch-fanout ok (degraded: ${degraded.join('; ')})` : '[+]watch-fanout ok');
    const kms = this.kmsProviders();
    if (kms) {
      ok &&= kms.ok;
      lines.push(kms.line);
    }
    const workers = workerSiblings.readyzLine();
    if (workers) {
      ok &&= workers.ok;
      lines.push(workers.line);
    }
    // Other shards do not make the replica unready: only their own tenants are refused while one is down.
    for (const s of this.shards.states()) {
      // What each shard's primary promises about an acknowledged write (informational, never unready).
      if (s.durability) lines.push(`[+]shard-${s.name}-durability ok (${s.durability.message})`);
      if (s.name === DEFAULT_SHARD) continue;
      lines.push(s.ready ? `[+]shard-${s.name} ok` : `[+]shard-${s.name} ok (degraded: ${s.error ?? 'not connected'}; its tenants get 503)`);
    }
    const body = ok ? (verbose ? `${lines.join('\n')}\nreadyz check passed` : 'ok') : `${lines.filter((l) => l.startsWith('[-]') || verbose).join('\n')}\nreadyz check failed`;
    return { code: ok ? 200 : 503, contentType: TEXT, body };
  }

  /** /metrics in the Prometheus text format. */
  async metricsText(): Promise<HealthAnswer> {
    return { code: 200, contentType: this.metrics.registry.contentType, body: await this.metrics.registry.metrics() };
  }

  /** The answer for one of the health paths (`verbose`: the `?verbose` query), or undefined for any other path. */
  async answer(path: string, verbose = false): Promise<HealthAnswer | undefined> {
    if (path === '/healthz' || path === '/livez') return this.liveness();
    if (path === '/readyz') return this.readiness(verbose);
    if (path === '/readyz/kms-providers') {
      const kms = this.kmsProviders();
      if (!kms) return { code: 404, contentType: TEXT, body: 'no such health check: "kms-providers"' };
      return { code: kms.ok ? 200 : 500, contentType: TEXT, body: kms.ok ? 'ok' : `${kms.line}\nhealthz check failed` };
    }
    if (path === '/metrics') return this.metricsText();
    return undefined;
  }
}
