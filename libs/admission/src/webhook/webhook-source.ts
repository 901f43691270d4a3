import { type ChangeObserver, TenantSnapshots } from '@plinth/storage';
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
  /** Tenants unused for this long are forgotten. Default 10 minutes. */
  idleMs?: number;
  /** At most this many tenants are kept (least recently used go first). Default 10,000. */
  maxTenants?: number;
}

interface Compiled {
  fingerprint: string;
  hooks: readonly CompiledWebhook[];
}

interface TenantEntry {
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
 * A per-tenant cache of compiled webhooks fed by the change stream every
 * replica follows (see {@link observer}): a configuration created, changed
 * or deleted through any replica outdates the tenant's snapshot as soon as
 * this replica's stream applies its revision, and the next request reads
 * the configurations again (2 small list queries). No polling. Concurrent
 * reads of one tenant are shared, and unchanged configurations (same names
 * and resourceVersions) keep their compiled form.
 */
export class WebhookConfigurationCache implements WebhookSource {
  private readonly snapshots: TenantSnapshots<TenantEntry>;

  constructor(
    private readonly load: WebhookConfigurationLoader,
    opts: WebhookCacheOptions = {},
  ) {
    this.snapshots = new TenantSnapshots<TenantEntry>({ load: (t) => this.readTenant(t), idleMs: opts.idleMs, maxTenants: opts.maxTenants });
  }

  async webhooks(tenant: string, kind: WebhookKind): Promise<readonly CompiledWebhook[]> {
    const entry = await this.snapshots.get(tenant);
    return kind === 'mutating' ? entry.mutating.hooks : entry.validating.hooks;
  }

  /** Feed for the change streams of both configuration resources (see WatchCache.observe). */
  get observer(): ChangeObserver {
    return this.snapshots.observer;
  }

  /** Outdates a tenant's snapshot, so the next request reads the configurations afresh. */
  invalidate(tenant: string): void {
    this.snapshots.invalidate(tenant);
  }

  private async readTenant(tenant: string): Promise<TenantEntry> {
    const [mutating, validating] = await Promise.all([this.load(tenant, 'mutating'), this.load(tenant, 'validating')]);
    const previous = this.snapshots.peek(tenant);
    return {
      mutating: this.compile('mutating', mutating, previous?.mutating),
      validating: this.compile('validating', validating, previous?.validating),
    };
  }

  private compile(kind: WebhookKind, configs: WebhookConfigurationV1[], previous: Compiled | undefined): Compiled {
    const fp = fingerprint(configs);
    if (previous && previous.fingerprint === fp) return previous;
    return { fingerprint: fp, hooks: compileWebhooks(kind, configs) };
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
