import { type AdmissionAttributes, AdmissionError, type AdmissionModule, type AdmissionOperation } from '@plinth/admission';
import { type Authorizer, isPlainObject } from '@plinth/apimachinery';
import { APIEXTENSIONS_GROUP } from '../kinds/customresourcedefinition/crd-types.js';
import { exportReference } from '../kinds/apis/apis-types.js';
import { APIS_GROUP, APIS_VERSION } from '../kinds/apis/apis.schema.js';
import type { CrdRegistry } from '../crd/crd-registry.service.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ApiSharingIndex } from './api-sharing-index.js';
import { checkClaimAnswers, checkExportClaims } from './claims-admission.js';

function conflict(group: string, resource: string, name: string, detail: string): AdmissionError {
  const qualified = group ? `${resource}.${group}` : resource;
  return new AdmissionError({ code: 409, reason: 'Conflict', message: `Operation cannot be fulfilled on ${qualified} "${name}": ${detail}`, details: { name, group: group || undefined, kind: resource } });
}

function crdGroupResource(o: Record<string, unknown> | null): { group: string; resource: string } {
  const spec = isPlainObject(o?.spec) ? o.spec : {};
  const names = isPlainObject(spec.names) ? spec.names : {};
  return { group: typeof spec.group === 'string' ? spec.group : '', resource: typeof names.plural === 'string' ? names.plural : '' };
}

/**
 * APIBinding: the checks of sharing APIs across tenants (kcp's
 * APIBinding admission and its `bind` check), in the validating phase:
 * - creating an APIBinding needs verb `bind` on the APIExport in the
 *   provider tenant, decided by the provider's RBAC for the requesting
 *   user as it is (name, groups, tenant claims): 403 otherwise, before the
 *   export's existence is looked at, so a consumer learns nothing of a
 *   provider that did not grant it; then 404 when the export does not
 *   exist, 409 when one of its resources is already served in the consumer
 *   (a CRD of its own, or another binding);
 * - a CRD whose group and plural a binding serves in the tenant: 409;
 * - deleting an APIExport that some tenant binds: 409 (refused, never
 *   orphaning; the bindings go first);
 * - permission claims (apisharing/claims-admission.ts): an export's claims
 *   name resources its tenant serves, a binding answers claims its export
 *   makes: 422 otherwise.
 */
export class ApiBindingAdmission implements AdmissionModule {
  static readonly NAME = 'APIBinding';
  readonly name = ApiBindingAdmission.NAME;

  constructor(
    private readonly index: ApiSharingIndex,
    private readonly crds: CrdRegistry,
    private readonly authorizer: Authorizer,
    /** The registry an export's claims are checked against; unset, they are not. */
    private readonly registry?: ResourceRegistry,
  ) {}

  handles(op: AdmissionOperation): boolean {
    return op === 'CREATE' || op === 'UPDATE' || op === 'DELETE';
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    const { group, resource } = attrs.resource;
    if (attrs.subresource !== '') return;
    if (group === APIS_GROUP && resource === 'apibindings' && attrs.operation === 'CREATE') return this.binding(attrs);
    if (group === APIS_GROUP && resource === 'apibindings' && attrs.operation === 'UPDATE') return checkClaimAnswers(attrs, this.index);
    if (group === APIS_GROUP && resource === 'apiexports' && attrs.operation !== 'DELETE' && this.registry) return checkExportClaims(attrs, this.registry);
    if (group === APIS_GROUP && resource === 'apiexports' && attrs.operation === 'DELETE') return this.exportDeletion(attrs);
    if (group === APIEXTENSIONS_GROUP && resource === 'customresourcedefinitions' && attrs.operation !== 'DELETE') return this.crd(attrs);
  }

  private async binding(attrs: AdmissionAttributes): Promise<void> {
    const ref = exportReference(attrs.object ?? {});
    const decision = await this.authorizer.authorize({
      user: attrs.user,
      tenant: ref.path,
      verb: 'bind',
      resourceRequest: true,
      apiGroup: APIS_GROUP,
      apiVersion: APIS_VERSION,
      resource: 'apiexports',
      subresource: '',
      namespace: '',
      name: ref.name,
      path: '',
    });
    if (!decision.allowed) {
      throw AdmissionError.forbidden(APIS_GROUP, 'apibindings', attrs.name, `user "${attrs.user.username}" cannot bind apiexports.${APIS_GROUP} "${ref.name}" of tenant "${ref.path}"`);
    }
    await this.index.ready();
    const exp = this.index.exportOf(ref.path, ref.name);
    if (!exp) throw AdmissionError.notFound(APIS_GROUP, 'apiexports', ref.name);
    await this.crds.prepare(attrs.tenant);
    const ownCrds = this.crds.crds(attrs.tenant).map((c) => crdGroupResource(c as unknown as Record<string, unknown>));
    for (const r of exp.resources) {
      if (ownCrds.some((c) => c.group === r.group && c.resource === r.resource)) {
        throw conflict(APIS_GROUP, 'apibindings', attrs.name, `${r.resource}.${r.group} is served by a CustomResourceDefinition of this tenant`);
      }
      const other = this.index.bindingFor(attrs.tenant, r.group, r.resource);
      if (other && other.name !== attrs.name) {
        throw conflict(APIS_GROUP, 'apibindings', attrs.name, `${r.resource}.${r.group} is already bound by APIBinding "${other.name}"`);
      }
    }
    await checkClaimAnswers(attrs, this.index);
  }

  private async exportDeletion(attrs: AdmissionAttributes): Promise<void> {
    await this.index.ready();
    const consumers = this.index.consumersOf(attrs.tenant, attrs.name);
    if (consumers.length > 0) {
      throw conflict(APIS_GROUP, 'apiexports', attrs.name, `the export is bound by ${consumers.length} tenant(s); their APIBindings must be deleted first`);
    }
  }

  private async crd(attrs: AdmissionAttributes): Promise<void> {
    const { group, resource } = crdGroupResource(attrs.object);
    await this.index.ready();
    const b = this.index.bindingFor(attrs.tenant, group, resource);
    if (b && b.ref.path !== attrs.tenant) {
      throw conflict(APIEXTENSIONS_GROUP, 'customresourcedefinitions', attrs.name, `${resource}.${group} is served by APIBinding "${b.name}" (export ${b.ref.path}/${b.ref.name})`);
    }
  }
}
