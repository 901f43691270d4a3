import type { Logger } from 'pino';
import { ApiError, isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { CachedChange, ListCursor, Storage } from '@plinth/storage';
import type { ControllerManager } from '../controllers/controller-manager.js';
import { InformerController, type KeySource, onChanges } from '../controllers/informer-controller.js';
import type { FollowResource } from '../controllers/shared-informer.js';
import type { CrdRegistry } from '../crd/crd-registry.service.js';
import { APIBINDING_STORAGE_RESOURCE } from '../kinds/apis/apis.schema.js';
import type { ResourceDeleteService } from '../resource-store/resource-delete.service.js';
import { systemWriteContext } from '../resource-store/write-context.js';
import type { ApiSharingIndex } from './api-sharing-index.js';

/** What the cleanup of deleted bindings needs. */
export interface BindingCleanupDeps {
  /** The change feed of APIBindings (a binding's deletion queues its resources). */
  follow: FollowResource;
  index: ApiSharingIndex;
  crds: CrdRegistry;
  lists: Storage;
  deleter: ResourceDeleteService;
  logger: Logger;
  queues: Pick<ControllerManager, 'queue'>;
}

const SEP = '\u0000';
const PAGE = 500;
/** As upstream's CRD finalizer acts: the API server itself. */
const USER = { username: 'system:apiserver', uid: '', groups: ['system:masters', 'system:authenticated'] };

/** The keys of a deleted APIBinding: one per resource it bound (`tenant, group, resource, provider tenant`). */
function keysOf(c: CachedChange): string[] {
  if (c.type !== 'DELETED') return [];
  const b = c.object as KubeObject & { spec?: { reference?: { export?: { path?: unknown } } }; status?: { boundResources?: unknown } };
  const provider = b.spec?.reference?.export?.path;
  const bound = b.status?.boundResources;
  if (typeof provider !== 'string' || !Array.isArray(bound)) return [];
  return bound.filter(isPlainObject).map((r) => [c.key.tenant, String(r.group ?? ''), String(r.resource ?? ''), provider].join(SEP));
}

/**
 * Deletes what a deleted APIBinding made in its tenant: the tenant's
 * objects of each resource the binding served (finalizers respected, the
 * tenant's admission run as for any delete), as upstream's CRD finalizer
 * deletes a CRD's instances. Skipped when the tenant serves the resource
 * again (another binding of it, or a CRD of its own created since). A
 * controller of the ControllerManager (one replica runs it), fed by the
 * change stream of APIBindings: a deletion that happens while no replica
 * runs it (or before a crash) is not seen again, and its objects stay
 * stored, unreachable (docs/api-sharing.md).
 */
export class BindingCleanupController extends InformerController {
  constructor(private readonly deps: BindingCleanupDeps) {
    super({ name: 'apibinding-cleanup', workers: 1, queues: deps.queues });
  }

  protected sources(): KeySource[] {
    return [onChanges(this.deps.follow, APIBINDING_STORAGE_RESOURCE, keysOf)];
  }

  protected async reconcile(key: string): Promise<void> {
    const [tenant, group, resource, provider] = key.split(SEP);
    if (this.deps.index.bindingFor(tenant, group, resource)) return;
    await this.deps.crds.prepare(tenant);
    if (this.deps.crds.crds(tenant).some((c) => c.spec.group === group && c.spec.names?.plural === resource)) return;
    await this.deps.crds.prepare(provider);
    const def = this.deps.crds.definitions(provider).find((d) => d.group === group && d.resource === resource);
    if (!def) {
      this.deps.logger.warn({ tenant, group, resource, provider }, 'the provider no longer defines a resource of a deleted APIBinding: its objects stay stored');
      return;
    }
    let remaining = 0;
    let after: ListCursor | undefined;
    do {
      const page = await this.deps.lists.list({ tenant, resource: def.storageResource, limit: PAGE, after });
      for (const item of page.items) {
        const ctx = { ...systemWriteContext(tenant, def, item.key.namespace), user: USER, options: { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1' } };
        try {
          const outcome = await this.deps.deleter.delete(ctx, item.key.name, { uid: (item.body as KubeObject).metadata.uid });
          if (!outcome.deleted) remaining++;
        } catch (err) {
          if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
          if (err.code === 409) remaining++;
        }
      }
      after = page.next;
    } while (after);
    // Finalizers hold some: look again later (the queue's backoff).
    if (remaining > 0) throw new Error(`${remaining} object(s) of ${resource}.${group} in tenant "${tenant}" wait for their finalizers`);
  }
}
