import type { Logger } from 'pino';
import { ApiError, isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { ALL_RESOURCES, type CachedChange, type OwnerRepository, type StoredObject } from '@plinth/storage';
import { EventRecorder } from '../events/event-recorder.js';
import { groupVersion, type ResourceDefinition } from '../registry/resource-definition.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER, type ResourceDeleteService } from '../resource-store/resource-delete.service.js';
import { forEachConcurrently } from '../resource-store/bounded-concurrency.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { systemWriteContext } from '../resource-store/write-context.js';
import type { ControllerManager } from '../controllers/controller-manager.js';
import { every, InformerController, type KeySource, onChanges } from '../controllers/informer-controller.js';
import type { FollowResource } from '../controllers/shared-informer.js';

/** How often the collector looks for dependents whose owners are gone (deletions it may have missed). */
export const GC_SWEEP_INTERVAL_MS = 5000;

/** Tasks the collector works on at once (steps are idempotent; a lost race is a 404 or a conflict). */
const GC_WORKERS = 8;

/** Dependents one collector deletes or updates at a time. */
const COLLECTS_IN_FLIGHT = 8;

/** What the collector needs. */
export interface GarbageCollectorDeps {
  owners: OwnerRepository;
  registry: ResourceRegistry;
  store: ResourceStoreService;
  deleter: ResourceDeleteService;
  /** The change feed of every resource (uncached: no informer could hold every object of every resource). */
  follow: FollowResource;
  logger: Logger;
  /** Gives the collector its work queue. */
  queues: Pick<ControllerManager, 'queue'>;
}

interface OwnerRef {
  uid: string;
  apiVersion?: string;
  kind?: string;
  name?: string;
  blockOwnerDeletion?: boolean;
}

/** How a dependent's owner references resolve, as upstream's attemptToDeleteItem classifies them. */
interface OwnerVerdict {
  /** Uids of owners that exist where the dependent may name them (its own namespace, or cluster-scoped). */
  solid: Set<string>;
  /** References to an existing owner in another namespace, or to a namespaced owner from a cluster-scoped dependent. */
  invalidNamespace: OwnerRef[];
}

/** `[v1/ConfigMap, namespace: a, name: b, uid: c]`, as upstream's objectReference prints. */
function describeRef(r: OwnerRef, namespace: string): string {
  return `[${r.apiVersion ?? ''}/${r.kind ?? ''}, namespace: ${namespace}, name: ${r.name ?? ''}, uid: ${r.uid}]`;
}

function sameRefs(a: unknown, b: unknown): boolean {
  return JSON.stringify(ownerRefs({ metadata: a } as never)) === JSON.stringify(ownerRefs({ metadata: b } as never));
}

function ownerRefs(o: KubeObject | Record<string, unknown>): OwnerRef[] {
  const refs = (o.metadata as { ownerReferences?: unknown } | undefined)?.ownerReferences;
  return Array.isArray(refs) ? refs.filter((r): r is OwnerRef => isPlainObject(r) && typeof r.uid === 'string') : [];
}

function ownerKeyTask(tenant: string, resource: string, namespace: string, name: string, uid: string): string {
  return `owner-key\u0000${tenant}\u0000${resource}\u0000${namespace}\u0000${name}\u0000${uid}`;
}

function uidOf(o: Record<string, unknown> | undefined): string | undefined {
  const uid = (o?.metadata as { uid?: unknown } | undefined)?.uid;
  return typeof uid === 'string' ? uid : undefined;
}

/**
 * Garbage collection by ownerReferences, per tenant, as upstream's
 * collector: a dependent whose owners are all gone is deleted (in the
 * background, so its own dependents follow); one that keeps a live owner
 * only loses the dangling references. An owner deleted with propagation
 * Orphan keeps its `orphan` finalizer until its dependents no longer name
 * it; one deleted with Foreground keeps `foregroundDeletion` until its
 * dependents are deleted. A controller (see ControllerManager): one
 * replica runs it, from its change stream, with a periodic sweep for
 * dependents whose owners vanished while no collector was watching, and on
 * start a resync (another replica may have stopped mid-way).
 */
export class GarbageCollector extends InformerController {
  private readonly events: EventRecorder;

  constructor(private readonly deps: GarbageCollectorDeps) {
    super({ name: 'garbage-collector', workers: GC_WORKERS, queues: deps.queues });
    this.events = new EventRecorder(deps, 'garbage-collector-controller');
  }

  /**
   * Every change of every resource (owners deleted, references changed,
   * owners entering Orphan or Foreground deletion); a sweep every few
   * seconds, at start and after a hole in the feed. Its reads go through
   * the owner index of storage (objects by uid, dependents of a uid).
   */
  protected sources(): KeySource[] {
    return [onChanges(this.deps.follow, ALL_RESOURCES, (c) => this.tasksOf(c), () => 'sweep'), every(GC_SWEEP_INTERVAL_MS, () => 'sweep')];
  }

  /** Starts following changes and sweeping; resyncs what a collector that stopped left (owners in Orphan or Foreground deletion, dangling dependents). */
  override start(): void {
    super.start();
    this.enqueue('resync');
  }

  private tasksOf(c: CachedChange): string[] {
    const tasks: string[] = [];
    const obj = c.object as KubeObject | undefined;
    const uid = uidOf(c.type === 'DELETED' ? (c.object as Record<string, unknown>) : obj);
    if (!uid) return tasks;
    if (c.type === 'DELETED') {
      // Its dependents may be orphans now; its owners may be waiting in the foreground for it.
      tasks.push(`dependents\u0000${c.key.tenant}\u0000${uid}`);
      for (const r of ownerRefs(obj ?? {})) tasks.push(`owner\u0000${c.key.tenant}\u0000${r.uid}`);
      return tasks;
    }
    // A new or changed set of owner references: each must name an owner the dependent may have (upstream's addDependentToOwners).
    const prevMeta = (c.prevObject as KubeObject | null)?.metadata;
    if (ownerRefs(obj ?? {}).length > 0 && (c.type === 'ADDED' || !sameRefs(obj?.metadata, prevMeta))) {
      tasks.push(`refs\u0000${c.key.tenant}\u0000${uid}`);
    }
    const finalizers = obj?.metadata?.finalizers ?? [];
    if (obj?.metadata?.deletionTimestamp && (finalizers.includes(ORPHAN_FINALIZER) || finalizers.includes(FOREGROUND_FINALIZER))) {
      tasks.push(ownerKeyTask(c.key.tenant, c.key.resource, c.key.namespace, c.key.name, uid));
    }
    return tasks;
  }

  protected reconcile(task: string): Promise<void> {
    return this.run(task);
  }

  private async run(task: string): Promise<void> {
    const [kind, tenant, ...rest] = task.split('\u0000');
    if (kind === 'sweep') return this.sweep();
    if (kind === 'resync') return this.resync();
    if (kind === 'dependents') return this.collectDependentsOf(tenant, rest[0]);
    if (kind === 'owner') return this.finishOwnerByUid(tenant, rest[0]);
    if (kind === 'refs') {
      const [dep] = await this.deps.owners.objectsByUid(tenant, [rest[0]]);
      return dep ? this.collect(dep) : undefined;
    }
    if (kind === 'owner-key') {
      const [resource, namespace, name, uid] = rest;
      return this.finishOwner(tenant, resource, namespace, name, uid);
    }
  }

  /** Dependents of a uid that no longer exists: deleted when no owner is left, else stripped of the dangling references. */
  private async collectDependentsOf(tenant: string, ownerUid: string): Promise<void> {
    if ((await this.deps.owners.existingUids(tenant, [ownerUid])).has(ownerUid)) return;
    // Batch after batch until one brings nothing new (a dependent that stays, e.g. held by a finalizer, is met again).
    const seen = new Set<string>();
    for (;;) {
      const batch = (await this.deps.owners.dependentsOf(tenant, ownerUid)).filter((d) => !seen.has(uidOf(d.body) ?? ''));
      if (batch.length === 0 || !this.queue.active) return;
      for (const d of batch) seen.add(uidOf(d.body) ?? '');
      await forEachConcurrently(batch, COLLECTS_IN_FLIGHT, (dep) => this.collect(dep, ownerUid));
    }
  }

  /**
   * Upstream's attemptToDeleteItem for one dependent: owners that do not
   * exist, or exist only in another namespace (reported with an
   * OwnerRefInvalidNamespace event), are absent; with none left it is
   * deleted, else the absent references are removed. A cluster-scoped
   * dependent naming a namespaced owner is left alone after the event, as
   * upstream (its reference cannot be resolved).
   */
  private async collect(dep: StoredObject, absentUid?: string): Promise<void> {
    const { tenant } = dep.key;
    const refs = ownerRefs(dep.body);
    const def = this.defOf(tenant, dep.key.resource);
    if (!def || refs.length === 0) return;
    // Its only owner is the one just found gone: nothing to look up.
    const { solid, invalidNamespace } = refs.every((r) => r.uid === absentUid) ? { solid: new Set<string>(), invalidNamespace: [] } : await this.resolveOwners(dep, refs);
    for (const r of invalidNamespace) await this.reportInvalidNamespace(dep, def, r);
    if (invalidNamespace.length > 0 && !def.namespaced) return;
    if (solid.size === refs.length) return;
    const ctx = systemWriteContext(tenant, def, dep.key.namespace);
    if (solid.size > 0) {
      await this.ignoreGone(this.deps.store.systemUpdate(ctx, dep.key.name, (o) => {
        o.metadata.ownerReferences = ownerRefs(o).filter((r) => solid.has(r.uid)) as never;
      }));
      return;
    }
    await this.ignoreGone(this.deps.deleter.delete(ctx, dep.key.name, { uid: uidOf(dep.body), propagation: 'Background' }));
  }

  private async resolveOwners(dep: StoredObject, refs: OwnerRef[]): Promise<OwnerVerdict> {
    const owners = await this.deps.owners.objectsByUid(dep.key.tenant, refs.map((r) => r.uid));
    const verdict: OwnerVerdict = { solid: new Set(), invalidNamespace: [] };
    for (const r of refs) {
      const owner = owners.find((o) => uidOf(o.body) === r.uid);
      if (!owner) continue;
      if (owner.key.namespace === '' || owner.key.namespace === dep.key.namespace) verdict.solid.add(r.uid);
      else verdict.invalidNamespace.push(r);
    }
    return verdict;
  }

  /** Upstream's reportInvalidNamespaceOwnerRef: a Warning event on the dependent. */
  private async reportInvalidNamespace(dep: StoredObject, def: ResourceDefinition, r: OwnerRef): Promise<void> {
    const namespace = dep.key.namespace;
    const stored = await this.events.record({
      tenant: dep.key.tenant,
      involved: { kind: def.kind, apiVersion: groupVersion(def), ...(namespace ? { namespace } : {}), name: dep.key.name, uid: uidOf(dep.body) },
      type: 'Warning',
      reason: 'OwnerRefInvalidNamespace',
      message: `ownerRef ${describeRef(r, namespace)} does not exist in namespace ${JSON.stringify(namespace)}`,
    });
    if (!stored) this.deps.logger.warn({ tenant: dep.key.tenant, dependent: dep.key.name }, 'OwnerRefInvalidNamespace event could not be recorded');
  }

  /** An owner in Orphan or Foreground deletion, by key: orphans or deletes its dependents, then lets it go. */
  private async finishOwner(tenant: string, resource: string, namespace: string, name: string, uid: string): Promise<void> {
    const def = this.defOf(tenant, resource);
    if (!def) return;
    const ctx = systemWriteContext(tenant, def, namespace);
    const [stored] = await this.deps.owners.objectsByUid(tenant, [uid]);
    if (!stored || stored.key.resource !== resource || stored.key.name !== name) return;
    const owner = stored.body as KubeObject;
    const finalizers = owner.metadata.finalizers ?? [];
    if (!owner.metadata.deletionTimestamp) return;
    const deps = await this.deps.owners.dependentsOf(tenant, uid);
    if (finalizers.includes(ORPHAN_FINALIZER)) {
      for (const d of deps) {
        const dDef = this.defOf(tenant, d.key.resource);
        if (!dDef) continue;
        await this.ignoreGone(this.deps.store.systemUpdate(systemWriteContext(tenant, dDef, d.key.namespace), d.key.name, (o) => {
          const kept = ownerRefs(o).filter((r) => r.uid !== uid);
          if (kept.length > 0) o.metadata.ownerReferences = kept as never;
          else delete o.metadata.ownerReferences;
        }));
      }
      await this.removeFinalizer(ctx, name, ORPHAN_FINALIZER);
      return;
    }
    if (finalizers.includes(FOREGROUND_FINALIZER)) {
      const blocking = deps.filter((d) => ownerRefs(d.body).some((r) => r.uid === uid && r.blockOwnerDeletion === true));
      for (const d of deps) {
        const dDef = this.defOf(tenant, d.key.resource);
        if (dDef) await this.ignoreGone(this.deps.deleter.delete(systemWriteContext(tenant, dDef, d.key.namespace), d.key.name, { uid: uidOf(d.body), propagation: 'Foreground' }));
      }
      // The owner goes once no dependent that blocks its deletion is left (each one's deletion brings us back here).
      if (blocking.length === 0 || (await this.deps.owners.dependentsOf(tenant, uid)).every((d) => !ownerRefs(d.body).some((r) => r.uid === uid && r.blockOwnerDeletion === true))) {
        await this.removeFinalizer(ctx, name, FOREGROUND_FINALIZER);
      }
    }
  }

  /** A dependent was deleted: an owner of it waiting in the foreground may be free to go. */
  private async finishOwnerByUid(tenant: string, ownerUid: string): Promise<void> {
    const [owner] = await this.deps.owners.objectsByUid(tenant, [ownerUid]);
    if (!owner) return;
    const meta = owner.body.metadata as KubeObject['metadata'];
    if (!meta.deletionTimestamp || !(meta.finalizers ?? []).includes(FOREGROUND_FINALIZER)) return;
    await this.finishOwner(tenant, owner.key.resource, owner.key.namespace, owner.key.name, ownerUid);
  }

  /** Takes `finalizer` off a deleting object; when none is left, the object goes (as an update that removes the last finalizer does). */
  private async removeFinalizer(ctx: ReturnType<typeof systemWriteContext>, name: string, finalizer: string): Promise<void> {
    const updated = await this.ignoreGone(this.deps.store.systemUpdate(ctx, name, (o) => {
      o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    }));
    if (updated && updated.metadata.deletionTimestamp && (updated.metadata.finalizers ?? []).length === 0) {
      await this.ignoreGone(this.deps.deleter.delete(ctx, name, { uid: updated.metadata.uid }));
    }
  }

  /** Dependents whose owners vanished unseen: each missing owner's dependents are collected (batch after batch). */
  private async sweep(): Promise<void> {
    const byTenant = new Map<string, Set<string>>();
    for (const dep of await this.deps.owners.withDanglingOwners()) {
      const uids = byTenant.get(dep.key.tenant) ?? new Set<string>();
      for (const r of ownerRefs(dep.body)) uids.add(r.uid);
      byTenant.set(dep.key.tenant, uids);
    }
    for (const [tenant, uids] of byTenant) {
      const live = await this.deps.owners.existingUids(tenant, [...uids]);
      for (const uid of uids) if (!live.has(uid)) this.queue.add(`dependents\u0000${tenant}\u0000${uid}`);
    }
  }

  /** Owners left in Orphan or Foreground deletion (by a collector that stopped): each is looked at again. */
  private async resync(): Promise<void> {
    for (const o of await this.deps.owners.deletingWithFinalizers([ORPHAN_FINALIZER, FOREGROUND_FINALIZER])) {
      const uid = uidOf(o.body);
      if (uid) this.queue.add(ownerKeyTask(o.key.tenant, o.key.resource, o.key.namespace, o.key.name, uid));
    }
  }

  private defOf(tenant: string, storageResource: string): ResourceDefinition | undefined {
    return this.deps.registry.all(tenant).find((d) => d.storageResource === storageResource);
  }

  private async ignoreGone<T>(p: Promise<T>): Promise<T | undefined> {
    try {
      return await p;
    } catch (err) {
      if (err instanceof ApiError && (err.code === 404 || err.code === 409)) return undefined;
      throw err;
    }
  }
}
