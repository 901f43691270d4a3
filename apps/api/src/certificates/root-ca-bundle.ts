import { pemCertificates, type ServingPki } from '../pki/pki-store.js';

/**
 * The CA bundle clients should trust to reach this server (what
 * `kube-root-ca.crt` publishes): the operator's PLINTH_ROOT_CA_FILE when
 * given (as kube-controller-manager's --root-ca-file); else the platform's CA, which signed the
 * serving certificate; when the operator supplied the serving certificate,
 * the CA certificates of its chain (those after the first), or, for a lone
 * certificate, that certificate itself (self-signed, or to be pinned).
 */
export function rootCaBundle(pki: Pick<ServingPki, 'caPem' | 'operatorServingCert' | 'serving' | 'rootCaPem'>): string {
  if (pki.rootCaPem) return pki.rootCaPem;
  if (!pki.operatorServingCert) return pki.caPem;
  const blocks = pemCertificates(pki.serving.certPem);
  const chain = blocks.length > 1 ? blocks.slice(1) : blocks;
  return chain.map((b) => `${b}\n`).join('');
}
