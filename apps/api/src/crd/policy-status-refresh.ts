import type { Logger } from 'pino';
import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { Storage } from '@plinth/storage';
import { validatingAdmissionPolicyResource } from '../kinds/admissionregistration/admission-policy.resources.js';
import { validatingAdmissionPolicyStatusStrategy } from '../kinds/admissionregistration/admission-policy.strategy.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import type { WriteContext } from '../resource-store/write-context.js';

const CONTROLLER_USER = { username: 'system:controller:validatingadmissionpolicy-status-controller', groups: ['system:masters', 'system:authenticated'] };

function statusWrite(tenant: string): WriteContext {
  return {
    tenant,
    def: validatingAdmissionPolicyResource,
    namespace: '',
    subresource: 'status',
    user: CONTROLLER_USER,
    dryRun: false,
    options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' },
    warnings: [],
    // Untracked (no managedFields entry): a re-check that changes nothing must not write.
  };
}

/** The policy with its status marked as behind: the status strategy type-checks it again. Does not mutate `cur`. */
function markStale(cur: KubeObject): KubeObject {
  const status = isPlainObject(cur.status) ? cur.status : {};
  return { ...cur, status: { ...status, observedGeneration: 0 } };
}

/**
 * Re-type-checks a tenant's ValidatingAdmissionPolicies when its custom
 * resources' schemas change (upstream's status controller re-checks when
 * the types it checked against change): each policy goes through the
 * `/status` strategy with its status marked behind, so `status.typeChecking`
 * is recomputed against the kinds served now; a policy whose result did not
 * change is not written. Safe on every replica at once (conditional writes).
 */
export class PolicyStatusRefresher {
  constructor(
    private readonly lists: Storage,
    private readonly store: ResourceStoreService,
    private readonly logger?: Logger,
  ) {}

  /** Re-checks every policy of `tenant`; never throws (failures are logged). */
  async refresh(tenant: string): Promise<void> {
    try {
      const page = await this.lists.list({ tenant, resource: validatingAdmissionPolicyResource.storageResource });
      for (const item of page.items) {
        const name = (item.body as KubeObject).metadata.name ?? '';
        await this.store.update(statusWrite(tenant), name, markStale, validatingAdmissionPolicyStatusStrategy);
      }
    } catch (err) {
      this.logger?.warn({ tenant, err: (err as Error).message }, 're-type-checking admission policies failed');
    }
  }
}
