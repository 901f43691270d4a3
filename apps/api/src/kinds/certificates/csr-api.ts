import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { isPlainObject, type KubeObject } from '@plinth/apimachinery';

/** The API group of CertificateSigningRequests and signers. */
export const CERTIFICATES_GROUP = 'certificates.k8s.io';
/** `group/resource` under which CertificateSigningRequests are stored. */
export const CSR_STORAGE_RESOURCE = `${CERTIFICATES_GROUP}/certificatesigningrequests`;
/** The signer of client certificates for this server (upstream's name). */
export const KUBE_APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
/** The signer name v1 refuses (it exists only for v1beta1 objects). */
export const LEGACY_UNKNOWN_SIGNER = 'kubernetes.io/legacy-unknown';
/** The group a tenant may never request (it is allowed everything everywhere). */
export const MASTERS_GROUP = 'system:masters';

/** Upstream's KeyUsage values, sorted as its validation lists them. */
export const KEY_USAGES = [
  'any',
  'cert sign',
  'client auth',
  'code signing',
  'content commitment',
  'crl sign',
  'data encipherment',
  'decipher only',
  'digital signature',
  'email protection',
  'encipher only',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'key agreement',
  'key encipherment',
  'microsoft sgc',
  'netscape sgc',
  'ocsp signing',
  's/mime',
  'server auth',
  'signing',
  'timestamping',
];

/** One entry of status.conditions. */
export interface CsrCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}

/** spec of a CertificateSigningRequest (request is base64 of PEM, as JSON carries []byte). */
export interface CsrSpec {
  request?: string;
  signerName?: string;
  expirationSeconds?: number;
  usages?: string[];
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** A CertificateSigningRequest as stored. */
export interface CsrObject extends KubeObject {
  spec?: CsrSpec;
  status?: { conditions?: CsrCondition[]; certificate?: string };
}

/** The spec of `obj` (an empty one when absent or malformed). Does not copy. */
export function csrSpec(obj: KubeObject): CsrSpec {
  return isPlainObject(obj.spec) ? (obj.spec as CsrSpec) : {};
}

/** status.conditions of `obj` (empty when absent or malformed); entries that are not objects are skipped. */
export function csrConditions(obj: KubeObject): CsrCondition[] {
  const list = isPlainObject(obj.status) ? obj.status.conditions : undefined;
  return Array.isArray(list) ? list.filter((c): c is CsrCondition => isPlainObject(c)) : [];
}

/** True when `obj` has a condition of `type` with status True. */
export function hasTrueCondition(obj: KubeObject, type: string): boolean {
  return csrConditions(obj).some((c) => c.type === type && c.status === 'True');
}

/** status.certificate of `obj` (base64 of PEM), or '' when none was issued. */
export function issuedCertificate(obj: KubeObject): string {
  const c = isPlainObject(obj.status) ? obj.status.certificate : undefined;
  return typeof c === 'string' ? c : '';
}

/** Decodes a JSON []byte (standard base64, as Go's encoding/json); undefined when it is not valid base64. */
export function decodeBytes(b64: unknown): Buffer | undefined {
  if (typeof b64 !== 'string') return undefined;
  if (b64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) return undefined;
  return Buffer.from(b64, 'base64');
}

/** What a PEM text holds: its blocks' types and DER bodies, in order. Pure; linear in the text. */
export function pemBlocks(text: string): Array<{ type: string; der: Buffer }> {
  const out: Array<{ type: string; der: Buffer }> = [];
  const re = /-----BEGIN ([A-Z0-9 ]{1,64})-----\r?\n([A-Za-z0-9+/=\r\n]*?)-----END \1-----/g;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push({ type: m[1], der: Buffer.from(m[2].replace(/\s+/g, ''), 'base64') });
  return out;
}

/**
 * Parses the PEM CERTIFICATE REQUEST of spec.request (PEM bytes) and checks
 * its self-signature, as upstream's ParseCSR and CheckSignature. Throws an
 * Error worded as upstream's when it is not one or does not verify.
 */
export async function parseCertificateRequest(pem: Buffer): Promise<x509.Pkcs10CertificateRequest> {
  const block = pemBlocks(pem.toString('latin1'))[0];
  if (!block || block.type !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(block.der);
  } catch (err) {
    throw new Error(`x509: malformed certificate request: ${(err as Error).message}`);
  }
  let ok = false;
  try {
    ok = await csr.verify(webcrypto as unknown as Parameters<typeof csr.verify>[0]);
  } catch {
    ok = false;
  }
  if (!ok) throw new Error('x509: the certificate request signature does not verify');
  return csr;
}

/** The subject's organizations of a parsed request (the groups a client certificate will carry). */
export function requestedOrganizations(csr: x509.Pkcs10CertificateRequest): string[] {
  return csr.subjectName.getField('O');
}
