import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { ObjectListRepository } from '@plinth/storage';
import type { ResourceRevisionsRepository, ResourceRevisionSummary } from '@plinth/storage';
import type { KubeObject } from '@plinth/apimachinery';
import type { ResourceDefinition } from '../registry/resource-definition.js';
import { CRD_STORAGE_RESOURCE } from './crd-resource.js';
import { asCrd, type CrdObject } from './crd-types.js';
import { type CompiledCrd, compileCrd, compileKey } from './custom-resource.compiler.js';

/**
 * The per-tenant cache of CustomResourceDefinitions and the resources
 * they serve. Every replica polls the newest revision of each tenant's
 * CRDs (one cheap query per poll for all tenants in use) and reloads a
 * tenant whose CRDs changed, so a CRD change reaches discovery, OpenAPI and
 * request routing on every replica within one poll interval. Compiled
 * versions are reused while a CRD's generation and names are unchanged.
 */

interface TenantCrds {
  summary: string;
  crds: CrdObject[];
  compiled: Map<string, CompiledCrd>;
  defs: ResourceDefinition[];
  byKey: Map<string, ResourceDefinition>;
  signature: string;
  lastUsed: number;
}

/** Forget tenants nobody asked about for this long (their CRDs reload on the next request). */
const IDLE_TENANT_MS = 10 * 60_000;

function summaryText(s: ResourceRevisionSummary | undefined): string {
  return s ? `${s.count}@${s.maxRevision}` : '0@0';
}

/** Options of the CRD cache. */
export interface CrdRegistryOptions {
  pollIntervalMs: number;
  logger?: Logger;
}

/** The CRD cache; see the file comment. */
export class CrdRegistry {
  private readonly tenants = new Map<string, TenantCrds>();
  private readonly loading = new Map<string, Promise<TenantCrds>>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  /** Called after a tenant's CRDs were (re)loaded: the controller reconciles them. */
  onChange?: (tenant: string, crds: CrdObject[]) => void;

  constructor(
    private readonly lists: ObjectListRepository,
    private readonly revisions: ResourceRevisionsRepository,
    private readonly opts: CrdRegistryOptions,
  ) {}

  /** Loads the tenant's CRDs unless cached; marks the tenant as in use. */
  async prepare(tenant: string): Promise<void> {
    const hit = this.tenants.get(tenant);
    if (hit) {
      hit.lastUsed = Date.now();
      return;
    }
    await this.load(tenant);
  }

  /** Reloads the tenant's CRDs now (after a CRD write on this replica). */
  async refresh(tenant: string): Promise<void> {
    await this.load(tenant, true);
  }

  /** The custom resource definitions served to the tenant (empty until loaded). */
  definitions(tenant: string): ResourceDefinition[] {
    return this.tenants.get(tenant)?.defs ?? [];
  }

  /** The definition at group/version/resource, or undefined. */
  lookup(tenant: string, group: string, version: string, resource: string): ResourceDefinition | undefined {
    return this.tenants.get(tenant)?.byKey.get(`${group}/${version}/${resource}`);
  }

  /** Changes whenever any served schema, name or version of the tenant changes. */
  signature(tenant: string): string {
    return this.tenants.get(tenant)?.signature ?? '';
  }

  /** The tenant's CRD objects as last loaded. */
  crds(tenant: string): CrdObject[] {
    return this.tenants.get(tenant)?.crds ?? [];
  }

  /** Tenants currently cached. */
  trackedTenants(): string[] {
    return [...this.tenants.keys()];
  }

  private load(tenant: string, force = false): Promise<TenantCrds> {
    const pending = this.loading.get(tenant);
    if (pending && !force) return pending;
    const p = this.read(tenant).finally(() => {
      if (this.loading.get(tenant) === p) this.loading.delete(tenant);
    });
    this.loading.set(tenant, p);
    return p;
  }

  private async read(tenant: string): Promise<TenantCrds> {
    const summary = summaryText((await this.revisions.summaries(CRD_STORAGE_RESOURCE, [tenant])).get(tenant));
    const page = await this.lists.list({ tenant, resource: CRD_STORAGE_RESOURCE });
    const crds = page.items.map((i) => asCrd(i.body as KubeObject));
    const previous = this.tenants.get(tenant);
    const compiled = new Map<string, CompiledCrd>();
    for (const crd of crds) {
      const name = crd.metadata.name ?? '';
      const prior = previous?.compiled.get(name);
      let c = prior && prior.key === compileKey(crd) ? prior : undefined;
      if (!c) {
        try {
          c = compileCrd(crd);
        } catch (err) {
          this.opts.logger?.warn({ tenant, crd: name, err: (err as Error).message }, 'cannot compile CRD');
          continue;
        }
      }
      c.state.terminating = !!crd.metadata.deletionTimestamp;
      compiled.set(name, c);
    }
    const entry = this.index(crds, compiled, summary, previous?.lastUsed ?? Date.now());
    this.tenants.set(tenant, entry);
    if (!previous || previous.signature !== entry.signature || previous.summary !== entry.summary) this.onChange?.(tenant, crds);
    return entry;
  }

  private index(crds: CrdObject[], compiled: Map<string, CompiledCrd>, summary: string, lastUsed: number): TenantCrds {
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
    return { summary, crds, compiled, defs, byKey, signature: sig.digest('hex'), lastUsed };
  }

  /** Starts polling; idempotent. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.poll(), this.opts.pollIntervalMs);
    this.timer.unref();
  }

  /** Stops polling and waits for a poll in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    while (this.polling) await new Promise((r) => setTimeout(r, 10));
  }

  /** One poll: reload every cached tenant whose CRD summary changed. */
  async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const now = Date.now();
      for (const [t, e] of this.tenants) if (now - e.lastUsed > IDLE_TENANT_MS) this.tenants.delete(t);
      const tenants = [...this.tenants.keys()];
      if (tenants.length === 0) return;
      const summaries = await this.revisions.summaries(CRD_STORAGE_RESOURCE, tenants);
      for (const t of tenants) {
        const cached = this.tenants.get(t);
        if (cached && cached.summary !== summaryText(summaries.get(t))) await this.load(t, true);
      }
    } catch (err) {
      this.opts.logger?.warn({ err: (err as Error).message }, 'CRD poll failed');
    } finally {
      this.polling = false;
    }
  }
}
