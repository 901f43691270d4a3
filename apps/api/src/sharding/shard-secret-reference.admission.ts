import type { AdmissionAttributes, AdmissionModule, AdmissionOperation } from '@plinth/admission';
import { AdmissionError } from '@plinth/admission';
import type { Authorizer } from '@plinth/apimachinery';
import { PLATFORM_TENANT, TENANCY_GROUP } from '../kinds/tenant/tenant-api.js';
import { secretRefOf } from './shard-catalog.js';

/**
 * A Shard's `spec.secretRef` is read by the platform (the shard's
 * connection URL, password included), so naming a Secret must not let a
 * user reach one they cannot read themselves: at CREATE, and at an UPDATE
 * that changes the reference, the requesting user must be allowed `get` on
 * that Secret, else 403 Forbidden naming it (as upstream checks the objects
 * a request makes it resolve on the user's behalf, e.g. a CSR's signer or
 * an owner reference). Privileged groups pass through the authorizer
 * itself. The status subresource is not checked (it cannot set the spec).
 */
export class ShardSecretReferenceModule implements AdmissionModule {
  static readonly NAME = 'ShardSecretReference';
  readonly name = ShardSecretReferenceModule.NAME;

  constructor(private readonly authorizer: Authorizer) {}

  handles(op: AdmissionOperation): boolean {
    return op === 'CREATE' || op === 'UPDATE';
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    if (attrs.tenant !== PLATFORM_TENANT || attrs.resource.group !== TENANCY_GROUP || attrs.resource.resource !== 'shards' || attrs.subresource !== '' || !attrs.object) return;
    const ref = secretRefOf(attrs.object as Parameters<typeof secretRefOf>[0]);
    if (!ref) return;
    if (attrs.operation === 'UPDATE' && attrs.oldObject) {
      const old = secretRefOf(attrs.oldObject as Parameters<typeof secretRefOf>[0]);
      if (old && old.namespace === ref.namespace && old.name === ref.name) return;
    }
    const decision = await this.authorizer.authorize({
      user: attrs.user,
      tenant: attrs.tenant,
      verb: 'get',
      resourceRequest: true,
      apiGroup: '',
      apiVersion: 'v1',
      resource: 'secrets',
      subresource: '',
      namespace: ref.namespace,
      name: ref.name,
      path: `/api/v1/namespaces/${ref.namespace}/secrets/${ref.name}`,
    });
    if (decision.allowed) return;
    throw AdmissionError.forbidden(
      TENANCY_GROUP,
      'shards',
      attrs.name,
      `User ${JSON.stringify(attrs.user.username)} cannot get the Secret "${ref.namespace}/${ref.name}" that spec.secretRef names (resource "secrets" in API group "" in the namespace ${JSON.stringify(ref.namespace)})`,
    );
  }
}
