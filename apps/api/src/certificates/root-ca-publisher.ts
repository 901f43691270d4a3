import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import { ApiError, type KubeObject } from '@plinth/apimachinery';
import type { Storage } from '@plinth/storage';
import type { ControllerManager } from '../controllers/controller-manager.js';
import { InformerController, type KeySource, onInformer } from '../controllers/informer-controller.js';
import type { SharedInformer } from '../controllers/shared-informer.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import type { WriteContext } from '../resource-store/write-context.js';

/** The ConfigMap every namespace holds, as upstream's root CA publisher names it. */
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
/** Upstream's annotation on it, and its text. */
export const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
export const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. ' +
  'No other usage is guaranteed across distributions of Kubernetes clusters.';

/** The identity of its writes (upstream's controller service account). */
const PUBLISHER_USER = { username: 'system:serviceaccount:kube-system:root-ca-cert-publisher', uid: '', groups: ['system:masters', 'system:authenticated'] };

/** What the publisher needs. */
export interface RootCaPublisherDeps {
  /** PEM of the CA bundle clients should trust to reach this server. */
  rootCa: string;
  registry: ResourceRegistry;
  store: ResourceStoreService;
  /** Read by the create hook, which cannot wait for the informers. */
  objects: Storage;
  /** Namespaces of every tenant (a shared informer). */
  namespaces: SharedInformer;
  /** The published ConfigMaps (`kube-root-ca.crt`) of every tenant (a shared informer). */
  configMaps: SharedInformer;
  logger: Logger;
  queues: Pick<ControllerManager, 'queue'>;
}

const keyOf = (tenant: string, namespace: string) => `${tenant}\u0000${namespace}`;

function isDeleting(ns: KubeObject | undefined): boolean {
  return !!ns?.metadata?.deletionTimestamp || (ns?.status as { phase?: string } | undefined)?.phase === 'Terminating';
}

/**
 * Upstream's root CA publisher (pkg/controller/certificates/rootcacertpublisher):
 * every namespace of every tenant holds the ConfigMap `kube-root-ca.crt`
 * with `ca.crt`, the CA bundle clients should trust, and the
 * `kubernetes.io/description` annotation. Created with the namespace (by
 * the replica that created it, before the create is answered), recreated
 * when deleted and restored when its data or annotation is changed, by the
 * controller (one replica runs it), which reads namespaces and these
 * ConfigMaps from shared informers (every namespace is looked at when it
 * starts). Not created in a namespace being deleted.
 */
export class RootCaPublisher extends InformerController {
  constructor(private readonly deps: RootCaPublisherDeps) {
    super({ name: 'root-ca-cert-publisher', workers: 2, queues: deps.queues });
  }

  /** Hook after a namespace is created: publishes its ConfigMap at once (reading storage). Never throws (the controller retries). */
  readonly namespaceCreated = async (ctx: WriteContext, ns: KubeObject): Promise<KubeObject> => {
    try {
      await this.ensure(ctx.tenant, ns.metadata.name ?? '', 'storage');
    } catch (err) {
      this.deps.logger.warn({ tenant: ctx.tenant, namespace: ns.metadata.name, err: (err as Error).message }, `${ROOT_CA_CONFIGMAP} could not be published; the controller retries`);
      this.queue.add(keyOf(ctx.tenant, ns.metadata.name ?? ''));
    }
    return ns;
  };

  /** Every namespace not being deleted (all of them at start); the published ConfigMap changed or deleted. */
  protected sources(): KeySource[] {
    return [
      onInformer(this.deps.namespaces, (e) => (e.type !== 'delete' && !isDeleting(e.object.body as KubeObject) ? keyOf(e.object.key.tenant, e.object.key.name) : undefined)),
      onInformer(this.deps.configMaps, (e) => (e.type !== 'add' ? keyOf(e.object.key.tenant, e.object.key.namespace) : undefined)),
    ];
  }

  protected async reconcile(key: string): Promise<void> {
    const [tenant, namespace] = key.split('\u0000');
    await this.ensure(tenant, namespace, 'cache');
  }

  /** Creates the ConfigMap in `namespace`, or restores its data and annotation; nothing in a namespace that is gone or being deleted. */
  private async ensure(tenant: string, namespace: string, from: 'cache' | 'storage'): Promise<void> {
    const nsDef = this.deps.registry.lookup(tenant, '', 'v1', 'namespaces');
    const cmDef = this.deps.registry.lookup(tenant, '', 'v1', 'configmaps');
    if (!nsDef || !cmDef) return;
    const read = async (def: typeof nsDef, ns: string, name: string, informer: SharedInformer) =>
      from === 'cache' ? informer.get(tenant, ns, name) : await this.deps.objects.get(ResourceStoreService.key(tenant, def, ns, name), { internal: true });
    const ns = await read(nsDef, '', namespace, this.deps.namespaces);
    if (!ns || isDeleting(ns.body as KubeObject)) return;
    const ctx: WriteContext = {
      tenant,
      def: cmDef,
      namespace,
      subresource: '',
      user: PUBLISHER_USER,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
      warnings: [],
      fieldManager: 'kube-controller-manager',
    };
    const data = { 'ca.crt': this.deps.rootCa };
    const current = await read(cmDef, namespace, ROOT_CA_CONFIGMAP, this.deps.configMaps);
    try {
      if (!current) {
        await this.deps.store.create(ctx, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: ROOT_CA_CONFIGMAP, annotations: { [DESCRIPTION_ANNOTATION]: DESCRIPTION } }, data });
        return;
      }
      const cm = current.body as KubeObject & { data?: unknown };
      if (isDeepStrictEqual(cm.data, data) && cm.metadata.annotations?.[DESCRIPTION_ANNOTATION]) return;
      await this.deps.store.update({ ...ctx, options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' } }, ROOT_CA_CONFIGMAP, (o) => {
        (o as KubeObject & { data?: unknown }).data = data;
        o.metadata.annotations = { ...o.metadata.annotations, [DESCRIPTION_ANNOTATION]: DESCRIPTION };
        return o;
      });
    } catch (err) {
      // Created meanwhile (its change brings it back here), or the namespace went or is going: nothing to do.
      if (err instanceof ApiError && (err.code === 409 || err.code === 404 || (err.code === 403 && /being terminated/.test(err.message)))) return;
      throw err;
    }
  }
}
