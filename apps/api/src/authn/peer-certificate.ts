import type { TLSSocket } from 'node:tls';
import { boundTenant, subjectUids, USER_UID_OID } from '../pki/tenant-binding.js';
import type { PeerCertificate } from './authenticator.js';

const cache = new WeakMap<object, PeerCertificate | null>();

function values(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

/**
 * The client certificate of a TLS connection, read once per connection (a
 * TLS session cannot change its peer) and remembered for its later requests.
 * Undefined when the socket is not TLS or the client sent no certificate.
 */
export function peerCertificateOf(socket: unknown): PeerCertificate | undefined {
  if (!socket || typeof (socket as TLSSocket).getPeerCertificate !== 'function') return undefined;
  const tls = socket as TLSSocket;
  const hit = cache.get(tls);
  if (hit !== undefined) return hit ?? undefined;
  const raw = tls.getPeerCertificate();
  let cert: PeerCertificate | null = null;
  if (raw && Object.keys(raw).length > 0) {
    const subject = (raw.subject ?? {}) as unknown as Record<string, string | string[] | undefined>;
    cert = {
      verified: tls.authorized,
      verifyError: tls.authorizationError ? String(tls.authorizationError) : undefined,
      commonName: values(subject.CN)[0] ?? '',
      organizations: values(subject.O),
      extKeyUsage: (raw as { ext_key_usage?: string[] }).ext_key_usage,
    };
    readBinding(cert, raw.raw);
    // Node names attributes it does not know by their OID: read the DER only when a UID attribute is there.
    if (subject[USER_UID_OID] !== undefined) readUids(cert, raw.raw);
  }
  cache.set(tls, cert);
  return cert ?? undefined;
}

/** Reads the subject's user UID attributes into `cert` (one that is not a string becomes `uidError`). Mutates `cert`. */
function readUids(cert: PeerCertificate, der: Buffer | undefined): void {
  if (!der) return;
  try {
    cert.uids = subjectUids(der);
  } catch (err) {
    cert.uidError = (err as Error).message;
  }
}

/** Reads the tenant binding of a client certificate into `cert` (a malformed one becomes `bindingError`). Mutates `cert`. */
function readBinding(cert: PeerCertificate, der: Buffer | undefined): void {
  if (!der) return;
  try {
    const binding = boundTenant(der);
    cert.tenant = binding?.tenant;
    cert.tenantUid = binding?.uid;
  } catch (err) {
    cert.bindingError = (err as Error).message;
  }
}
