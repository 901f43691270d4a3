import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { type ChangeObserver, STORAGE, type Storage, TenantSnapshots } from '@plinth/storage';
import type { KubeObject } from '@plinth/apimachinery';
import type { ResourceDefinition } from '../registry/resource-definition.js';
import { CRD_STORAGE_RESOURCE } from '../kinds/customresourcedefinition/crd.resource.js';
import { asCrd, type CrdObject } from '../kinds/customresourcedefinition/crd-types.js';
import { type CompiledCrd, compileCrd, compileKey, type FeatureStageOf } from './custom-resource.compiler.js';
import type { ConversionWebhookCaller } from './conversion/conversion-webhook.js';

/**
 * The per-tenant cache of CustomResourceDefinitions and the resources
 * they serve, fed by the change stream every replica follows: a CRD
 * created, changed or deleted through any replica outdates the tenant's
 * snapshot as soon as this replica's stream applies its revision, and the
 * snapshot is read again (in the background, and at the latest by the next
 * request to the tenant). No polling. Compiled versions are reused while a
 * CRD's generation and names are unchanged.
 */

interface TenantCrds {
  summary: string;
  crds: CrdObject[];
  compiled: Map<string, CompiledCrd>;
  defs: ResourceDefinition[];
  byKey: Map<string, ResourceDefinition>;
  signature: string;
}

/** Options of the CRD cache. */
export interface CrdRegistryOptions {
  logger?: Logger;
  /** The stage of a feature gate in a tenant (the server's or the tenant's own), for the descriptions of gated fields in published schemas. */
  featureStage?: (tenant: string, gate: string) => string | undefined;
  /** Loads the tenant's own feature gates before its CRDs are compiled (feed {@link observer} their changes too). */
  prepareFeatures?: (tenant: string) => Promise<void>;
  /** Calls CRD conversion webhooks (strategy Webhook); unset: such CRDs convert as with None. */
  conversionWebhooks?: ConversionWebhookCaller;
}

/** The CRD cache; see the file comment. */
export class CrdRegistry {
  private readonly snapshots: TenantSnapshots<TenantCrds>;
  private readonly changeListeners: ((tenant: string, crds: CrdObject[]) => void)[] = [];
  private readonly servedListeners: ((tenant: string) => void)[] = [];

  constructor(
    private readonly lists: Storage,
    private readonly opts: CrdRegistryOptions = {},
  ) {
    this.snapshots = new TenantSnapshots<TenantCrds>({
      load: (tenant) => this.read(tenant),
      reloadOnChange: true,
      onError: (err, tenant) => this.opts.logger?.warn({ tenant, err: (err as Error).message }, 'CRD reload failed'),
    });
  }

  /** Feed for the change stream of `CRD_STORAGE_RESOURCE` (see WatchCache.observe). */
  get observer(): ChangeObserver {
    return this.snapshots.observer;
  }

  /** Adds a listener told after a tenant's CRDs were (re)loaded and differ from before (the controller reconciles them). */
  onChange(listener: (tenant: string, crds: CrdObject[]) => void): void {
    this.changeListeners.push(listener);
  }

  /** Adds a listener told after the kinds a tenant's CRDs serve changed (a new compilation: schema, names, establishment), not on its first load. */
  onServedChange(listener: (tenant: string) => void): void {
    this.servedListeners.push(listener);
  }

  /** Loads the tenant's CRDs unless the cached ones are current; marks the tenant as in use. */
  async prepare(tenant: string): Promise<void> {
    await this.snapshots.get(tenant);
  }

  /** Waits until the tenant's CRDs reflect every change this replica's stream has applied. */
  async refresh(tenant: string): Promise<void> {
    await this.snapshots.get(tenant);
  }

  /** The custom resource definitions served to the tenant (empty until loaded). */
  definitions(tenant: string): ResourceDefinition[] {
    return this.snapshots.peek(tenant)?.defs ?? [];
  }

  /** The definition at group/version/resource, or undefined. */
  lookup(tenant: string, group: string, version: string, resource: string): ResourceDefinition | undefined {
    return this.snapshots.peek(tenant)?.byKey.get(`${group}/${version}/${resource}`);
  }

  /** Changes whenever any served schema, name or version of the tenant changes. */
  signature(tenant: string): string {
    return this.snapshots.peek(tenant)?.signature ?? '';
  }

  /** The tenant's CRD objects as last loaded. */
  crds(tenant: string): CrdObject[] {
    return this.snapshots.peek(tenant)?.crds ?? [];
  }

  /** Tenants currently cached. */
  trackedTenants(): string[] {
    return this.snapshots.tenants();
  }

  private async read(tenant: string): Promise<TenantCrds> {
    const page = await this.lists.list({ tenant, resource: CRD_STORAGE_RESOURCE });
    const crds = page.items.map((i) => asCrd(i.body as KubeObject));
    const summary = `${page.items.length}@${Math.max(0, ...page.items.map((i) => i.revision))}`;
    const previous = this.snapshots.peek(tenant);
    await this.opts.prepareFeatures?.(tenant);
    const stageOf: FeatureStageOf = (gate) => this.opts.featureStage?.(tenant, gate);
    const compiled = new Map<string, CompiledCrd>();
    for (const crd of crds) {
      const name = crd.metadata.name ?? '';
      const prior = previous?.compiled.get(name);
      let c = prior && prior.key === compileKey(crd, stageOf) ? prior : undefined;
      if (!c) {
        try {
          c = compileCrd(crd, stageOf, this.opts.conversionWebhooks ? { tenant, webhooks: this.opts.conversionWebhooks } : undefined);
        } catch (err) {
          this.opts.logger?.warn({ tenant, crd: name, err: (err as Error).message }, 'cannot compile CRD');
          continue;
        }
      }
      c.state.terminating = !!crd.metadata.deletionTimestamp;
      compiled.set(name, c);
    }
    const entry = this.index(crds, compiled, summary);
    if (!previous || previous.signature !== entry.signature || previous.summary !== entry.summary) {
      // After the snapshot is in place: the controller reads it.
      setImmediate(() => {
        for (const l of this.changeListeners) l(tenant, crds);
      });
    }
    if (previous && previous.signature !== entry.signature) {
      setImmediate(() => {
        for (const l of this.servedListeners) l(tenant);
      });
    }
    return entry;
  }

  private index(crds: CrdObject[], compiled: Map<string, CompiledCrd>, summary: string): TenantCrds {
    const defs: ResourceDefinition[] = [];
    const byKey = new Map<string, ResourceDefinition>();
    const sig = createHash('sha1');
    for (const c of [...compiled.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      sig.update(`${c.name}|${c.key}\n`);
      for (const d of c.defs) {
        const key = `${d.group}/${d.version}/${d.resource}`;
        if (byKey.has(key)) continue;
        byKey.set(key, d);
        defs.push(d);
      }
    }
    return { summary, crds, compiled, defs, byKey, signature: sig.digest('hex') };
  }
}
