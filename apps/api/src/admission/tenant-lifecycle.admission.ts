import {
  type AdmissionAttributes,
  AdmissionError,
  type AdmissionModule,
  type AdmissionOperation,
} from '@plinth/admission';
import { tenantTerminatingMessage } from '@plinth/storage';
import { PLATFORM_TENANT, TENANCY_GROUP } from '../kinds/tenant/tenant-api.js';

/** The phase of a tenant's logical cluster; undefined when it does not exist. */
export type TenantPhaseLookup = (tenant: string) => Promise<'Active' | 'Terminating' | undefined>;

/**
 * TenantLifecycle, the tenant-level twin of NamespaceLifecycle: no write
 * into a tenant that is being deleted (403, as upstream refuses new content
 * in a terminating namespace), and the platform tenant cannot be deleted
 * (403, as the `default` namespace). Storage refuses the same writes
 * regardless (see migration 0002); this module answers them before any
 * webhook of the dying tenant is called.
 */
export class TenantLifecycleModule implements AdmissionModule {
  static readonly NAME = 'TenantLifecycle';
  readonly name = TenantLifecycleModule.NAME;

  constructor(private readonly phaseOf: TenantPhaseLookup) {}

  handles(op: AdmissionOperation): boolean {
    return op === 'CREATE' || op === 'UPDATE' || op === 'DELETE';
  }

  async admit(attrs: AdmissionAttributes): Promise<void> {
    await this.check(attrs);
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    await this.check(attrs);
  }

  private async check(attrs: AdmissionAttributes): Promise<void> {
    const { group, resource } = attrs.resource;
    const isTenant = group === TENANCY_GROUP && resource === 'tenants' && attrs.subresource === '';
    if (isTenant && attrs.operation === 'DELETE' && attrs.name === PLATFORM_TENANT) {
      throw AdmissionError.forbidden(group, resource, attrs.name, 'this tenant may not be deleted');
    }
    if ((await this.phaseOf(attrs.tenant)) === 'Terminating') {
      throw AdmissionError.forbidden(group, resource, attrs.name, tenantTerminatingMessage(attrs.tenant));
    }
  }
}
