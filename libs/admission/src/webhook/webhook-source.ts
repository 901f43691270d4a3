import { type CompiledWebhook, compileWebhooks } from './compiled-webhook.js';
import type { WebhookConfigurationV1, WebhookKind } from './webhook-configuration.js';

/** Where the webhook modules get a tenant's webhooks from. */
export interface WebhookSource {
  /** The tenant's webhooks of `kind` in call order. May reject when the configurations cannot be read. */
  webhooks(tenant: string, kind: WebhookKind): Promise<readonly CompiledWebhook[]>;
}

/** Reads every configuration object of `kind` of a tenant (newest state). */
export type WebhookConfigurationLoader = (tenant: string, kind: WebhookKind) => Promise<WebhookConfigurationV1[]>;

/** Options of {@link WebhookConfigurationCache}. */
export interface WebhookCacheOptions {
  /** A snapshot older than this is refreshed in the background; older than twice this, before use. Default 500. */
  refreshMs?: number;
  /** Tenants unused for this long are forgotten. Default 10 minutes. */
  idleMs?: number;
  /** Background refresh failures (the next request retries). */
  onError?: (err: unknown, tenant: string) => void;
  /** Clock, for tests. */
  now?: () => number;
}

interface Compiled {
  fingerprint: string;
  hooks: readonly CompiledWebhook[];
}

interface TenantEntry {
  /** When the load that produced this snapshot started. */
  loadedAt: number;
  lastUsed: number;
  mutating: Compiled;
  validating: Compiled;
}

function fingerprint(configs: readonly WebhookConfigurationV1[]): string {
  return configs
    .map((c) => `${c.metadata.name ?? ''}\u0000${c.metadata.resourceVersion ?? JSON.stringify(c)}`)
    .sort()
    .join('\n');
}

/**
 * A per-tenant cache of compiled webhooks with bounded staleness, so that a
 * configuration change made through any replica takes effect on every
 * replica within 2 × `refreshMs` (1 s by default) without a poller: a
 * request that finds the tenant's snapshot older than `refreshMs` starts a
 * background reload (2 small list queries) and goes on with the snapshot;
 * one that finds it older than 2 × `refreshMs` (an idle tenant) waits for
 * the reload. Concurrent reloads of one tenant are shared, and unchanged
 * configurations (same names and resourceVersions) keep their compiled form.
 */
export class WebhookConfigurationCache implements WebhookSource {
  private readonly entries = new Map<string, TenantEntry>();
  private readonly inflight = new Map<string, Promise<TenantEntry>>();
  private readonly refreshMs: number;
  private readonly idleMs: number;
  private readonly now: () => number;

  constructor(
    private readonly load: WebhookConfigurationLoader,
    private readonly opts: WebhookCacheOptions = {},
  ) {
    this.refreshMs = opts.refreshMs ?? 500;
    this.idleMs = opts.idleMs ?? 10 * 60 * 1000;
    this.now = opts.now ?? Date.now;
  }

  async webhooks(tenant: string, kind: WebhookKind): Promise<readonly CompiledWebhook[]> {
    const now = this.now();
    let entry = this.entries.get(tenant);
    if (!entry || now - entry.loadedAt > 2 * this.refreshMs) {
      entry = await this.reload(tenant);
    } else if (now - entry.loadedAt > this.refreshMs && !this.inflight.has(tenant)) {
      this.reload(tenant).catch((err) => this.opts.onError?.(err, tenant));
    }
    entry.lastUsed = now;
    return kind === 'mutating' ? entry.mutating.hooks : entry.validating.hooks;
  }

  /** Forgets a tenant's snapshot, so the next request reads the configurations afresh. */
  invalidate(tenant: string): void {
    this.entries.delete(tenant);
  }

  private reload(tenant: string): Promise<TenantEntry> {
    const running = this.inflight.get(tenant);
    if (running) return running;
    const p = this.readTenant(tenant).finally(() => this.inflight.delete(tenant));
    this.inflight.set(tenant, p);
    return p;
  }

  private async readTenant(tenant: string): Promise<TenantEntry> {
    const startedAt = this.now();
    const [mutating, validating] = await Promise.all([this.load(tenant, 'mutating'), this.load(tenant, 'validating')]);
    const previous = this.entries.get(tenant);
    const entry: TenantEntry = {
      loadedAt: startedAt,
      lastUsed: previous?.lastUsed ?? startedAt,
      mutating: this.compile('mutating', mutating, previous?.mutating),
      validating: this.compile('validating', validating, previous?.validating),
    };
    this.entries.set(tenant, entry);
    this.forgetIdle(startedAt);
    return entry;
  }

  private compile(kind: WebhookKind, configs: WebhookConfigurationV1[], previous: Compiled | undefined): Compiled {
    const fp = fingerprint(configs);
    if (previous && previous.fingerprint === fp) return previous;
    return { fingerprint: fp, hooks: compileWebhooks(kind, configs) };
  }

  private forgetIdle(now: number): void {
    for (const [tenant, e] of this.entries) if (now - e.lastUsed > this.idleMs) this.entries.delete(tenant);
  }
}

/** A fixed set of configurations (tests, benchmarks). */
export class StaticWebhookSource implements WebhookSource {
  private readonly byKind: Record<WebhookKind, CompiledWebhook[]>;

  constructor(mutating: WebhookConfigurationV1[], validating: WebhookConfigurationV1[]) {
    this.byKind = { mutating: compileWebhooks('mutating', mutating), validating: compileWebhooks('validating', validating) };
  }

  async webhooks(_tenant: string, kind: WebhookKind): Promise<readonly CompiledWebhook[]> {
    return this.byKind[kind];
  }
}
