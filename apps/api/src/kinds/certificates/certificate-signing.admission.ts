import { isDeepStrictEqual } from 'node:util';
import { type AdmissionAttributes, AdmissionError, type AdmissionModule, type AdmissionOperation } from '@plinth/admission';
import type { Authorizer, KubeObject } from '@plinth/apimachinery';
import { CERTIFICATES_GROUP, csrConditions, csrSpec, issuedCertificate } from './csr-api.js';
import { isAuthorizedForSigner } from './signer-authorization.js';

/**
 * Upstream's CertificateSigning: an update of
 * `certificatesigningrequests/status` that changes the certificate or the
 * conditions needs `sign` on the request's signer (`signers` named the
 * signerName or `<domain>/*`); else 403.
 */
export class CertificateSigningModule implements AdmissionModule {
  readonly name = 'CertificateSigning';

  constructor(private readonly authorizer: Authorizer) {}

  handles(op: AdmissionOperation): boolean {
    return op === 'UPDATE';
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    const { group, resource } = attrs.resource;
    if (attrs.subresource !== 'status' || group !== CERTIFICATES_GROUP || resource !== 'certificatesigningrequests' || !attrs.object || !attrs.oldObject) return;
    const obj = attrs.object as KubeObject;
    const old = attrs.oldObject as KubeObject;
    if (issuedCertificate(obj) === issuedCertificate(old) && isDeepStrictEqual(csrConditions(obj), csrConditions(old))) return;
    const signerName = csrSpec(old).signerName ?? '';
    if (await isAuthorizedForSigner(this.authorizer, attrs.tenant, attrs.user, 'sign', signerName)) return;
    throw AdmissionError.forbidden(group, resource, attrs.name, `user not permitted to sign requests with signerName "${signerName}"`);
  }
}
