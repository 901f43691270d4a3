import type { Authorizer, UserInfo } from '@plinth/apimachinery';
import { CERTIFICATES_GROUP } from './csr-api.js';

/**
 * Upstream's IsAuthorizedForSignerName: whether `user` may `verb`
 * (`approve` or `sign`) requests for `signerName` in `tenant`: the verb on
 * `signers` of certificates.k8s.io named the signer, else named
 * `<domain>/*`. Reads only; never throws for an unknown user (false).
 */
export async function isAuthorizedForSigner(authorizer: Authorizer, tenant: string, user: UserInfo, verb: string, signerName: string): Promise<boolean> {
  const attrs = (name: string) => ({
    user,
    tenant,
    verb,
    resourceRequest: true,
    apiGroup: CERTIFICATES_GROUP,
    apiVersion: '*',
    resource: 'signers',
    subresource: '',
    namespace: '',
    name,
    path: '',
  });
  if ((await authorizer.authorize(attrs(signerName))).allowed) return true;
  const domain = signerName.split('/')[0];
  return (await authorizer.authorize(attrs(`${domain}/*`))).allowed;
}
