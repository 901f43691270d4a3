import { type KubeObject } from '@plinth/apimachinery';
import { csrConditions, decodeBytes, issuedCertificate, pemBlocks } from '../kinds/certificates/csr-api.js';
import { X509Certificate } from 'node:crypto';

/** The longest a certificate of the kube-apiserver-client signer lives: one year, upstream's --cluster-signing-duration default. */
export const MAX_CLIENT_CERTIFICATE_SECONDS = 365 * 24 * 3600;
/** How far back a certificate's notBefore goes (clock skew), as upstream's signer. */
const BACKDATE_MS = 5 * 60 * 1000;
/** Below this lifetime the backdate is added on top instead of taken out of it (upstream's Short). */
const SHORT_MS = 8 * 3600 * 1000;

/**
 * Upstream's validAPIServerClientUsages: `client auth` is required, and
 * only `digital signature` and `key encipherment` may come with it.
 * Returns why the usages are refused, or undefined. Pure.
 */
export function clientUsagesError(usages: string[]): string | undefined {
  for (const u of usages) {
    if (u !== 'client auth' && u !== 'digital signature' && u !== 'key encipherment') return `invalid usage for client certificate: ${u}`;
  }
  return usages.includes('client auth') ? undefined : 'missing required usage for client certificate: client auth';
}

/**
 * The validity of a certificate signed at `now` for `expirationSeconds`
 * (undefined: the maximum), capped at {@link MAX_CLIENT_CERTIFICATE_SECONDS}:
 * backdated 5 minutes, as upstream's PermissiveSigningPolicy (a lifetime
 * under 8 h keeps all of it after `now`). Pure.
 */
export function clientCertificateValidity(now: Date, expirationSeconds: number | undefined): { notBefore: Date; notAfter: Date } {
  const ttlMs = Math.min(expirationSeconds ?? MAX_CLIENT_CERTIFICATE_SECONDS, MAX_CLIENT_CERTIFICATE_SECONDS) * 1000;
  const t = now.getTime();
  return { notBefore: new Date(t - BACKDATE_MS), notAfter: new Date(ttlMs < SHORT_MS ? t + ttlMs : t + ttlMs - BACKDATE_MS) };
}

/** How long requests stay, as upstream's csrcleaner. */
export const CLEANER_EXPIRATIONS = { approvedMs: 3600_000, deniedMs: 3600_000, failedMs: 3600_000, pendingMs: 24 * 3600_000 } as const;

const olderThan = (time: string | undefined, ms: number, now: Date) => {
  const t = time ? Date.parse(time) : NaN;
  return Number.isFinite(t) && now.getTime() - t > ms;
};

function certificateExpired(obj: KubeObject, now: Date): boolean {
  const pem = decodeBytes(issuedCertificate(obj));
  const block = pem && pemBlocks(pem.toString('latin1'))[0];
  if (!block) return false;
  try {
    return Date.parse(new X509Certificate(block.der).validTo) < now.getTime();
  } catch {
    return false;
  }
}

/**
 * Upstream's csrcleaner decision: a request goes once issued and approved
 * more than an hour ago, denied or failed more than an hour ago (by the
 * condition's lastUpdateTime), pending (no condition) for more than 24
 * hours since creation, or when its issued certificate has expired. Pure.
 */
export function csrIsStale(obj: KubeObject, now: Date): boolean {
  const conditions = csrConditions(obj);
  const issued = issuedCertificate(obj) !== '';
  if (conditions.length === 0 && olderThan(obj.metadata.creationTimestamp, CLEANER_EXPIRATIONS.pendingMs, now)) return true;
  for (const c of conditions) {
    if (c.type === 'Approved' && issued && olderThan(c.lastUpdateTime, CLEANER_EXPIRATIONS.approvedMs, now)) return true;
    if (c.type === 'Denied' && olderThan(c.lastUpdateTime, CLEANER_EXPIRATIONS.deniedMs, now)) return true;
    if (c.type === 'Failed' && olderThan(c.lastUpdateTime, CLEANER_EXPIRATIONS.failedMs, now)) return true;
  }
  return issued && certificateExpired(obj, now);
}
