import type { ServingPki } from '../pki/pki-store.js';

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The CA bundle clients should trust to reach this server (what
 * `kube-root-ca.crt` publishes): the platform's CA, which signed the
 * serving certificate; when the operator supplied the serving certificate,
 * the CA certificates of its chain (those after the first), or, for a lone
 * certificate, that certificate itself (self-signed, or to be pinned).
 */
export function rootCaBundle(pki: Pick<ServingPki, 'caPem' | 'operatorServingCert' | 'serving'>): string {
  if (!pki.operatorServingCert) return pki.caPem;
  const blocks = pki.serving.certPem.match(PEM_BLOCK) ?? [];
  const chain = blocks.length > 1 ? blocks.slice(1) : blocks;
  return chain.map((b) => `${b}\n`).join('');
}
