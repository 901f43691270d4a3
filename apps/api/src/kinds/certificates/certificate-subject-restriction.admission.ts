import { type AdmissionAttributes, AdmissionError, type AdmissionModule, type AdmissionOperation } from '@plinth/admission';
import type { KubeObject } from '@plinth/apimachinery';
import { CERTIFICATES_GROUP, csrSpec, decodeBytes, KUBE_APISERVER_CLIENT_SIGNER, MASTERS_GROUP, parseCertificateRequest, requestedOrganizations } from './csr-api.js';

/**
 * Upstream's CertificateSubjectRestriction: a request to the
 * kube-apiserver-client signer may not ask for the `system:masters`
 * organization (403), in any tenant: that group is allowed everything
 * everywhere, so no tenant may hold it.
 */
export class CertificateSubjectRestrictionModule implements AdmissionModule {
  readonly name = 'CertificateSubjectRestriction';

  handles(op: AdmissionOperation): boolean {
    return op === 'CREATE';
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    const { group, resource } = attrs.resource;
    if (attrs.subresource !== '' || group !== CERTIFICATES_GROUP || resource !== 'certificatesigningrequests' || !attrs.object) return;
    const spec = csrSpec(attrs.object as KubeObject);
    if (spec.signerName !== KUBE_APISERVER_CLIENT_SIGNER) return;
    let organizations: string[];
    try {
      organizations = requestedOrganizations(await parseCertificateRequest(decodeBytes(spec.request) ?? Buffer.alloc(0)));
    } catch (err) {
      throw AdmissionError.forbidden(group, resource, attrs.name, `unable to parse csr: ${(err as Error).message}`);
    }
    if (organizations.includes(MASTERS_GROUP)) {
      throw AdmissionError.forbidden(group, resource, attrs.name, `use of ${KUBE_APISERVER_CLIENT_SIGNER} signer with ${MASTERS_GROUP} group is not allowed`);
    }
  }
}
