import { isPlainObject } from '@plinth/apimachinery';
import type { ChangeObserver, Storage } from '@plinth/storage';
import { type ExportedResource, type ExportReference, exportedResources, exportKey, exportReference } from '../kinds/apis/apis-types.js';
import { APIBINDING_CLEANUP_FINALIZER, APIBINDING_STORAGE_RESOURCE, APIEXPORT_STORAGE_RESOURCE } from '../kinds/apis/apis.schema.js';
import { type AcceptablePermissionClaim, bindingClaims, exportClaims, type PermissionClaim } from '../kinds/apis/permission-claims.js';

/** One APIBinding as the index keeps it. */
export interface IndexedBinding {
  name: string;
  uid: string;
  revision: number;
  ref: ExportReference;
  /** spec.permissionClaims: the binding's answers to the export's claims. */
  claims: AcceptablePermissionClaim[];
  /** metadata.deletionTimestamp is set: the binding is being deleted (its cleanup finalizer holds it). */
  deleting: boolean;
  /** metadata.finalizers holds the cleanup finalizer (APIBINDING_CLEANUP_FINALIZER). */
  finalized: boolean;
  /** status.boundResources: what the binding serves in its tenant. */
  bound: { group: string; resource: string }[];
}

/** One APIExport as the index keeps it. */
export interface IndexedExport {
  name: string;
  uid: string;
  revision: number;
  resources: ExportedResource[];
  /** spec.permissionClaims. */
  claims: PermissionClaim[];
}

type Kind = 'binding' | 'export';

function metaOf(body: Record<string, unknown>): Record<string, unknown> {
  return isPlainObject(body.metadata) ? body.metadata : {};
}

function boundOf(body: Record<string, unknown>): { group: string; resource: string }[] {
  const status = isPlainObject(body.status) ? body.status : {};
  return Array.isArray(status.boundResources) ? status.boundResources.filter(isPlainObject).map((r) => ({ group: String(r.group ?? ''), resource: String(r.resource ?? '') })) : [];
}

function uidOf(body: Record<string, unknown>): string {
  const meta = body.metadata as Record<string, unknown> | undefined;
  return typeof meta?.uid === 'string' ? meta.uid : '';
}

/**
 * Every tenant's APIExports and APIBindings, in memory on every replica,
 * and the reverse index export → binding tenants the provider's view reads.
 * Loaded once (every tenant's two lists) on first use, then kept current by
 * the change stream ({@link observer}): each change applies in revision
 * order, and a change older than what the index holds for the same object
 * (a list that raced the stream) is ignored, deletions included (kept as
 * tombstones). A reset of the stream or a failed load reloads everything.
 * Synchronous reads, so the resource registry can consult it per request.
 */
export class ApiSharingIndex {
  private readonly bindings = new Map<string, Map<string, IndexedBinding>>();
  private readonly exports = new Map<string, Map<string, IndexedExport>>();
  /** The revision of each object's deletion, by `kind/tenant/name`. */
  private readonly tombstones = new Map<string, number>();
  private readonly consumers = new Map<string, Set<string>>();
  private loading: Promise<void> | undefined;
  private readonly listeners: ((tenant: string) => void)[] = [];

  constructor(
    private readonly lists: Storage,
    /** Every tenant's name (a scan of the tenants table on every shard). */
    private readonly tenants: () => Promise<string[]>,
  ) {}

  /** Feeds the index from the change stream of both storage resources (observe both with it). */
  readonly observer: ChangeObserver = {
    onChange: (change) => {
      const kind: Kind | undefined = change.key.resource === APIBINDING_STORAGE_RESOURCE ? 'binding' : change.key.resource === APIEXPORT_STORAGE_RESOURCE ? 'export' : undefined;
      if (!kind) return;
      this.apply(kind, change.key.tenant, change.key.name, change.type === 'DELETED' ? undefined : change.object, change.revision);
    },
    onReset: () => {
      // Deletions inside the hole left no tombstone: start afresh.
      this.bindings.clear();
      this.exports.clear();
      this.tombstones.clear();
      this.consumers.clear();
      this.loading = undefined;
    },
    onTenantRetired: (tenant) => this.dropTenant(tenant),
  };

  /** Adds a listener told after a tenant's bindings, or an export it binds, changed. */
  onChange(listener: (tenant: string) => void): void {
    this.listeners.push(listener);
  }

  /** Resolves once every tenant's exports and bindings were read (at once after the first time). Rejects when the read failed; the next call reads again. */
  ready(): Promise<void> {
    if (!this.loading) {
      const loading = this.load();
      this.loading = loading;
      loading.catch(() => {
        if (this.loading === loading) this.loading = undefined;
      });
    }
    return this.loading;
  }

  private async load(): Promise<void> {
    for (const tenant of await this.tenants()) {
      for (const [kind, resource] of [['binding', APIBINDING_STORAGE_RESOURCE], ['export', APIEXPORT_STORAGE_RESOURCE]] as const) {
        const page = await this.lists.list({ tenant, resource });
        for (const item of page.items) this.apply(kind, tenant, String((item.body.metadata as Record<string, unknown>)?.name ?? ''), item.body, item.revision);
      }
    }
  }

  private apply(kind: Kind, tenant: string, name: string, body: Record<string, unknown> | undefined, revision: number): void {
    const map = kind === 'binding' ? this.bindings : this.exports;
    const held = map.get(tenant)?.get(name)?.revision ?? this.tombstones.get(`${kind}/${tenant}/${name}`) ?? 0;
    if (revision <= held) return;
    let perTenant = map.get(tenant);
    if (body === undefined) {
      perTenant?.delete(name);
      this.tombstones.set(`${kind}/${tenant}/${name}`, revision);
    } else {
      if (!perTenant) map.set(tenant, (perTenant = new Map()));
      this.tombstones.delete(`${kind}/${tenant}/${name}`);
      if (kind === 'binding') (perTenant as Map<string, IndexedBinding>).set(name, {
          name,
          uid: uidOf(body),
          revision,
          ref: exportReference(body),
          claims: bindingClaims(body),
          deleting: Boolean(metaOf(body).deletionTimestamp),
          finalized: Array.isArray(metaOf(body).finalizers) && (metaOf(body).finalizers as unknown[]).includes(APIBINDING_CLEANUP_FINALIZER),
          bound: boundOf(body),
        });
      else (perTenant as Map<string, IndexedExport>).set(name, { name, uid: uidOf(body), revision, resources: exportedResources(body), claims: exportClaims(body) });
    }
    this.reindex();
    const touched = kind === 'binding' ? [tenant] : this.consumersOf(tenant, name);
    for (const t of touched) for (const l of this.listeners) l(t);
  }

  private reindex(): void {
    this.consumers.clear();
    for (const [tenant, byName] of this.bindings) {
      for (const b of byName.values()) {
        const key = exportKey(b.ref);
        let set = this.consumers.get(key);
        if (!set) this.consumers.set(key, (set = new Set()));
        set.add(tenant);
      }
    }
  }

  private dropTenant(tenant: string): void {
    this.bindings.delete(tenant);
    this.exports.delete(tenant);
    for (const key of [...this.tombstones.keys()]) if (key.split('/')[1] === tenant) this.tombstones.delete(key);
    this.reindex();
  }

  /**
   * Every tenant's APIBindings the cleanup controller has work on: being
   * deleted and still carrying the cleanup finalizer, or not carrying it
   * yet (made before it existed).
   */
  bindingsToFinalize(): { tenant: string; binding: IndexedBinding }[] {
    const out: { tenant: string; binding: IndexedBinding }[] = [];
    for (const [tenant, byName] of this.bindings) for (const b of byName.values()) if (b.deleting === b.finalized) out.push({ tenant, binding: b });
    return out;
  }

  /** The APIBinding `name` of `tenant`, or undefined. */
  bindingOf(tenant: string, name: string): IndexedBinding | undefined {
    return this.bindings.get(tenant)?.get(name);
  }

  /** The tenant's APIBindings, by name order. */
  bindingsOf(tenant: string): IndexedBinding[] {
    return [...(this.bindings.get(tenant)?.values() ?? [])].sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  /** The APIExport `name` of `tenant`, or undefined. */
  exportOf(tenant: string, name: string): IndexedExport | undefined {
    return this.exports.get(tenant)?.get(name);
  }

  /** The tenants that bind the export `name` of `provider`, sorted. */
  consumersOf(provider: string, name: string): string[] {
    return [...(this.consumers.get(exportKey({ path: provider, name })) ?? [])].sort();
  }

  /** The binding of `tenant` through which `group/resource` is served there, or undefined. */
  bindingFor(tenant: string, group: string, resource: string): IndexedBinding | undefined {
    for (const b of this.bindingsOf(tenant)) {
      const exp = this.exportOf(b.ref.path, b.ref.name);
      if (exp?.resources.some((r) => r.group === group && r.resource === resource)) return b;
    }
    return undefined;
  }

  /** Changes whenever the tenant's bindings or the exports they bind change. */
  signature(tenant: string): string {
    return this.bindingsOf(tenant)
      .map((b) => `${b.name}@${b.revision}:${b.ref.path}/${b.ref.name}@${this.exportOf(b.ref.path, b.ref.name)?.revision ?? 0}`)
      .join(',');
  }
}
