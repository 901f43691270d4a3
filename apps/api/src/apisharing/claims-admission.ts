import { type AdmissionAttributes, AdmissionError } from '@plinth/admission';
import { exportReference } from '../kinds/apis/apis-types.js';
import { APIS_GROUP } from '../kinds/apis/apis.schema.js';
import { bindingClaims, claimResource, exportClaims, sameClaim } from '../kinds/apis/permission-claims.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ApiSharingIndex } from './api-sharing-index.js';

/**
 * An APIExport's claims name resources its tenant serves (built-in kinds,
 * its CRDs, resources it binds): 422 with a cause per claim that names
 * none, at `spec.permissionClaims[i].resource`. Runs on create and update.
 */
export async function checkExportClaims(attrs: AdmissionAttributes, registry: ResourceRegistry): Promise<void> {
  const claims = exportClaims(attrs.object ?? {});
  if (claims.length === 0) return;
  await registry.prepare(attrs.tenant);
  const served = registry.all(attrs.tenant);
  const errors = claims.flatMap((c, i) =>
    c.resource !== '' && !served.some((d) => d.group === c.group && d.resource === c.resource)
      ? [{ field: `spec.permissionClaims[${i}].resource`, reason: 'FieldValueNotFound', detail: `Not found: "${claimResource(c)}": no such resource is served in tenant "${attrs.tenant}"` }]
      : [],
  );
  if (errors.length > 0) throw AdmissionError.invalid(APIS_GROUP, 'APIExport', attrs.name, errors);
}

/**
 * An APIBinding answers claims its export makes, each exactly as made
 * (resource, verbs, selection): 422 with a cause per answer that matches
 * none, at `spec.permissionClaims[i]`. Runs on create (after the bind
 * check, so only a consumer allowed to bind learns the claims) and update.
 * The export's claims changing later leaves answers stale; the binding's
 * `PermissionClaimsValid` condition says so.
 */
export async function checkClaimAnswers(attrs: AdmissionAttributes, index: ApiSharingIndex): Promise<void> {
  const answers = bindingClaims(attrs.object ?? {});
  if (answers.length === 0) return;
  const ref = exportReference(attrs.object ?? {});
  await index.ready();
  const claims = index.exportOf(ref.path, ref.name)?.claims ?? [];
  const old = attrs.operation === 'UPDATE' ? bindingClaims(attrs.oldObject ?? {}) : [];
  const errors = answers.flatMap((a, i) =>
    // An answer kept unchanged from before stays allowed (the export may have changed since; the condition tells).
    claims.some((c) => sameClaim(c, a)) || old.some((o) => sameClaim(o, a) && o.state === a.state)
      ? []
      : [{ field: `spec.permissionClaims[${i}]`, reason: 'FieldValueInvalid', detail: `APIExport ${ref.path}/${ref.name} makes no such claim on ${claimResource(a)} (a claim is answered exactly as the export makes it: verbs, all, resourceSelector)` }],
  );
  if (errors.length > 0) throw AdmissionError.invalid(APIS_GROUP, 'APIBinding', attrs.name, errors);
}
