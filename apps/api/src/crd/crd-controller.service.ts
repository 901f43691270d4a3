import type { Logger } from 'pino';
import type { Storage } from '@plinth/storage';
import type { ControllerManager } from '../controllers/controller-manager.js';
import { InformerController, type KeySource, onInformer } from '../controllers/informer-controller.js';
import type { SharedInformer } from '../controllers/shared-informer.js';
import { ApiError, type KubeObject } from '@plinth/apimachinery';
import type { ResourceDefinition } from '../registry/resource-definition.js';
import type { ResourceDeleteService } from '../resource-store/resource-delete.service.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import type { WriteContext } from '../resource-store/write-context.js';
import type { CrdRegistry } from './crd-registry.service.js';
import { customResourceDefinitionResource } from '../kinds/customresourcedefinition/crd.resource.js';
import {
  asCrd,
  CRD_CLEANUP_FINALIZER,
  type CrdCondition,
  type CrdNames,
  type CrdObject,
  customResourceStorage,
  findCondition,
  isConditionTrue,
  setCondition,
} from '../kinds/customresourcedefinition/crd-types.js';
import { crdStatusStrategy } from '../kinds/customresourcedefinition/crd.strategy.js';
import { calculateNames } from './crd-naming.js';

/**
 * The CRD controller (upstream's naming, establishing and finalizer
 * controllers in one loop), run by one replica (a controller of the
 * ControllerManager): whenever a tenant's CRDs change (the shared CRD
 * informer it reads them from, or this replica's CRD registry reloading
 * them), it accepts names (reporting
 * conflicts in the NamesAccepted condition), marks CRDs Established, and
 * for deleted CRDs removes every instance and then the cleanup finalizer.
 * On start it looks at every tenant with CRDs (another replica may have
 * stopped mid-way). Work on one tenant is serialised; failures (with backoff) and
 * pending deletions are retried. The replica that took a CRD write answers
 * it once its own cache shows the CRD settled (crd-settled.ts), whichever
 * replica runs the controller.
 */

const SYSTEM_USER = { username: 'system:apiextensions-controller', groups: ['system:masters', 'system:authenticated'] };
const RETRY_MS = 1000;

/** Dependencies of the controller. */
export interface CrdControllerDeps {
  registry: CrdRegistry;
  store: ResourceStoreService;
  deleter: ResourceDeleteService;
  /** Lists a deleted CRD's instances. */
  lists: Storage;
  /** CRDs of every tenant (the shared informer). */
  crds: SharedInformer;
  /** Gives the controller its work queue. */
  queues: Pick<ControllerManager, 'queue'>;
  logger: Logger;
}

/** Tenants reconciled at once. */
const CRD_WORKERS = 4;

/** See the file comment. */
export class CrdController extends InformerController {
  constructor(private readonly deps: CrdControllerDeps) {
    super({ name: 'crd-controller', workers: CRD_WORKERS, queues: deps.queues });
  }

  /** Schedules a reconcile of the tenant (coalesced with one in progress; ignored unless this replica runs the controller). */
  enqueueTenant(tenant: string): void {
    this.queue.add(tenant);
  }

  /** The tenant of every CRD change (and of every CRD when the controller starts). */
  protected sources(): KeySource[] {
    return [onInformer(this.deps.crds, (e) => e.object.key.tenant)];
  }

  protected reconcile(tenant: string): Promise<void> {
    return this.reconcileTenant(tenant);
  }

  private ctx(tenant: string, subresource: string): WriteContext {
    return {
      tenant,
      def: customResourceDefinitionResource,
      namespace: '',
      subresource,
      user: SYSTEM_USER,
      dryRun: false,
      options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' },
      warnings: [],
      // As upstream's apiextensions controllers, which run inside kube-apiserver.
      fieldManager: 'kube-apiserver',
    };
  }

  /** One pass over the tenant's CRDs. */
  async reconcileTenant(tenant: string): Promise<void> {
    // This replica's cache may not hold the tenant yet (its requests went to another replica).
    await this.deps.registry.refresh(tenant);
    const crds = this.deps.crds.list(tenant).map((o) => o.body as CrdObject);
    let changed = false;
    let pending = false;
    for (const crd of crds) {
      if (crd.metadata.deletionTimestamp) {
        const done = await this.finalize(tenant, crd);
        changed ||= done;
        pending ||= !done && (crd.metadata.finalizers ?? []).includes(CRD_CLEANUP_FINALIZER);
      } else {
        changed ||= await this.acceptNames(tenant, crd, crds);
      }
    }
    if (changed) await this.deps.registry.refresh(tenant);
    if (pending) this.queue.addAfter(tenant, RETRY_MS);
  }

  private async writeStatus(tenant: string, name: string, mutate: (crd: CrdObject) => void): Promise<boolean> {
    try {
      await this.deps.store.update(this.ctx(tenant, 'status'), name, (cur) => {
        const crd = asCrd(cur);
        mutate(crd);
        return crd;
      }, crdStatusStrategy);
      return true;
    } catch (err) {
      if (err instanceof ApiError && (err.code === 404 || err.code === 409)) return false;
      throw err;
    }
  }

  private async acceptNames(tenant: string, crd: CrdObject, all: CrdObject[]): Promise<boolean> {
    const { names, namesAccepted } = calculateNames(crd, all);
    const established = isConditionTrue(crd, 'Established');
    const accepted = namesAccepted.status === 'True';
    const sameNames = JSON.stringify(names) === JSON.stringify(crd.status?.acceptedNames ?? {});
    const cur = findCondition(crd, 'NamesAccepted');
    const sameCond = cur?.status === namesAccepted.status && cur?.reason === namesAccepted.reason && cur?.message === namesAccepted.message;
    if (sameNames && sameCond && (established || !accepted)) return false;
    return this.writeStatus(tenant, crd.metadata.name ?? '', (c) => {
      c.status ??= {};
      c.status.acceptedNames = names as CrdNames;
      setCondition(c, namesAccepted);
      const est: CrdCondition = accepted
        ? { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }
        : findCondition(c, 'Established') ?? { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' };
      if (!isConditionTrue(c, 'Established')) setCondition(c, est);
    });
  }

  /** Deletes the CRD's instances, then its finalizer. Returns true when the finalizer is gone. */
  private async finalize(tenant: string, crd: CrdObject): Promise<boolean> {
    if (!(crd.metadata.finalizers ?? []).includes(CRD_CLEANUP_FINALIZER)) return false;
    const name = crd.metadata.name ?? '';
    const def = this.instanceDefinition(tenant, crd);
    let remaining = 0;
    if (def && isConditionTrue(crd, 'Established')) {
      if (findCondition(crd, 'Terminating')?.reason !== 'InstanceDeletionInProgress') {
        await this.writeStatus(tenant, name, (c) =>
          setCondition(c, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' }),
        );
      }
      remaining = await this.deleteInstances(tenant, def);
    }
    if (remaining > 0) return false;
    try {
      await this.deps.store.update(this.ctx(tenant, ''), name, (cur) => {
        cur.metadata.finalizers = (cur.metadata.finalizers ?? []).filter((f) => f !== CRD_CLEANUP_FINALIZER);
        const c = asCrd(cur);
        setCondition(c, { type: 'Terminating', status: 'False', reason: 'InstanceDeletionCompleted', message: 'removed all instances' });
        return c;
      });
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return true;
      throw err;
    }
    return true;
  }

  private instanceDefinition(tenant: string, crd: CrdObject): ResourceDefinition | undefined {
    const storage = customResourceStorage(crd);
    return this.deps.registry.definitions(tenant).find((d) => d.storageResource === storage);
  }

  /** Deletes every instance (finalizers respected); returns how many are still there. */
  private async deleteInstances(tenant: string, def: ResourceDefinition): Promise<number> {
    const page = await this.deps.lists.list({ tenant, resource: def.storageResource });
    let remaining = 0;
    for (const item of page.items) {
      const body = item.body as KubeObject;
      const wctx: WriteContext = { ...this.ctx(tenant, ''), def, namespace: item.key.namespace, options: { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1' } };
      try {
        const outcome = await this.deps.deleter.delete(wctx, item.key.name, { uid: body.metadata.uid });
        if (!outcome.deleted) remaining++;
      } catch (err) {
        if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
        if (err.code === 409) remaining++;
      }
    }
    return remaining;
  }
}
