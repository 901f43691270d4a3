import type { AdmissionAttributes, AdmissionOperation } from '../admission-attributes.js';
import { AdmissionError } from '../admission-error.js';
import type { AdmissionModule } from '../admission-module.js';

/** What NamespaceLifecycle needs to know about a namespace; undefined when it does not exist. */
export type NamespacePhaseLookup = (tenant: string, namespace: string) => Promise<'Active' | 'Terminating' | undefined>;

/** Namespaces that can never be deleted, as upstream's immortal namespaces. */
export const IMMORTAL_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);

/**
 * NamespaceLifecycle, as upstream's plugin: no new objects in a namespace
 * that is missing (404) or Terminating (403), and the immortal namespaces
 * cannot be deleted. Namespaced objects only; Namespace objects themselves
 * are checked for deletion only.
 */
export class NamespaceLifecycleModule implements AdmissionModule {
  static readonly NAME = 'NamespaceLifecycle';
  readonly name = NamespaceLifecycleModule.NAME;

  /**
   * `lookup` gives a namespace's phase; `onDeleteAdmitted`, when given, hears
   * of every namespace deletion this plugin admits (so a cache can read that
   * namespace live for a while, as upstream's forced live lookup).
   */
  constructor(
    private readonly lookup: NamespacePhaseLookup,
    private readonly onDeleteAdmitted?: (tenant: string, namespace: string) => void,
  ) {}

  handles(op: AdmissionOperation): boolean {
    return op === 'CREATE' || op === 'DELETE';
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    const isNamespace = attrs.resource.group === '' && attrs.resource.resource === 'namespaces' && attrs.subresource === '';
    if (isNamespace) {
      if (attrs.operation === 'DELETE' && IMMORTAL_NAMESPACES.has(attrs.name)) {
        throw AdmissionError.forbidden('', 'namespaces', attrs.name, 'this namespace may not be deleted');
      }
      if (attrs.operation === 'DELETE') this.onDeleteAdmitted?.(attrs.tenant, attrs.name);
      return;
    }
    if (!attrs.namespaced || attrs.operation !== 'CREATE') return;
    const phase = await this.lookup(attrs.tenant, attrs.namespace);
    if (phase === undefined) throw AdmissionError.notFound('', 'namespaces', attrs.namespace);
    if (phase === 'Terminating') {
      throw AdmissionError.forbidden(
        attrs.resource.group,
        attrs.resource.resource,
        attrs.name,
        `unable to create new content in namespace ${attrs.namespace} because it is being terminated`,
      );
    }
  }
}
