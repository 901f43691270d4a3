import { type AdmissionAttributes, AdmissionError, type AdmissionModule, type AdmissionOperation } from '@plinth/admission';
import type { Authorizer } from '@plinth/apimachinery';
import { CERTIFICATES_GROUP, csrSpec } from './csr-api.js';
import { isAuthorizedForSigner } from './signer-authorization.js';

/**
 * Upstream's CertificateApproval: an update of
 * `certificatesigningrequests/approval` needs `approve` on the request's
 * signer (`signers` named the signerName or `<domain>/*`); else 403.
 */
export class CertificateApprovalModule implements AdmissionModule {
  readonly name = 'CertificateApproval';

  constructor(private readonly authorizer: Authorizer) {}

  handles(op: AdmissionOperation): boolean {
    return op === 'UPDATE';
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    const { group, resource } = attrs.resource;
    if (attrs.subresource !== 'approval' || group !== CERTIFICATES_GROUP || resource !== 'certificatesigningrequests' || !attrs.object) return;
    const signerName = csrSpec(attrs.object as never).signerName ?? '';
    if (await isAuthorizedForSigner(this.authorizer, attrs.tenant, attrs.user, 'approve', signerName)) return;
    throw AdmissionError.forbidden(group, resource, attrs.name, `user not permitted to approve requests with signerName "${signerName}"`);
  }
}
