import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { exportPKCS8, generateKeyPair } from 'jose';
import { CertificateAuthority, certificateExpiry, type PemPair, subjectAltNames } from './certificate-authority.js';

/** The `CERTIFICATE` PEM blocks of `text`, in order, each without its trailing newline. */
export function pemCertificates(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

/** The user name of the generated platform-administrator client certificate. */
export const ADMIN_USER = 'plinth-admin';
/** The groups of the generated platform-administrator client certificate. */
export const ADMIN_GROUPS = ['system:masters'];

/** Operator-provided files that replace generated material (each optional). */
export interface PkiFiles {
  tlsCertFile?: string;
  tlsKeyFile?: string;
  clientCaFile?: string;
  /** The CA bundle clients should trust to reach this server (kube-controller-manager's --root-ca-file). */
  rootCaFile?: string;
  serviceAccountKeyFile?: string;
}

/** Everything secure serving and the authenticators need. */
export interface ServingPki {
  /** PEM of the serving certificate (chain) and its key. */
  serving: PemPair;
  /** PEM of the CA(s) client certificates must chain to. */
  clientCaPem: string;
  /** PEM of the generated CA; it signed the serving certificate unless the operator provided one. */
  caPem: string;
  /** True when the serving certificate is the operator's, so `caPem` did not sign it. */
  operatorServingCert: boolean;
  /** The operator's CA bundle for clients (PLINTH_ROOT_CA_FILE), when given: what `kube-root-ca.crt` and the kubeconfig carry. */
  rootCaPem?: string;
  /** The platform administrator's client certificate (signed by the generated CA). */
  admin: PemPair;
  /** PKCS#8 PEM of the ServiceAccount token signing key. */
  serviceAccountKeyPem: string;
  /** The generated CA, to sign further client certificates (tests, tooling). */
  ca: CertificateAuthority;
}

const BASE_FILES = ['ca.crt', 'ca.key', 'admin.crt', 'admin.key', 'sa.key'] as const;

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Writes `text` to `file` atomically (temp file + rename), readable by the owner only. */
async function writeSecret(file: string, text: string): Promise<void> {
  const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, text, { mode: 0o600 });
  await rename(tmp, file);
}

async function generateBase(dir: string): Promise<void> {
  const ca = await CertificateAuthority.generate('plinth-ca');
  const admin = await ca.issue({ commonName: ADMIN_USER, organizations: ADMIN_GROUPS, usage: 'client', validDays: 3650 });
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const files: Record<(typeof BASE_FILES)[number], string> = {
    'ca.crt': ca.certPem,
    'ca.key': ca.keyPem,
    'admin.crt': admin.certPem,
    'admin.key': admin.keyPem,
    'sa.key': await exportPKCS8(privateKey),
  };
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text, { mode: 0o600 });
}

/**
 * The CA, administrator certificate and ServiceAccount key in `<dataDir>/pki`,
 * created on first use. Creation is atomic (a temp folder renamed into
 * place), so replicas sharing a data folder and starting together agree on
 * one set: a loser of the race discards its own and reads the winner's.
 */
async function loadOrCreateBase(pkiDir: string): Promise<Record<(typeof BASE_FILES)[number], string>> {
  const read = async () => {
    const out: Partial<Record<(typeof BASE_FILES)[number], string>> = {};
    for (const f of BASE_FILES) out[f] = await readIfExists(path.join(pkiDir, f));
    return out;
  };
  let base = await read();
  if (BASE_FILES.some((f) => base[f] === undefined)) {
    if (BASE_FILES.some((f) => base[f] !== undefined)) throw new Error(`${pkiDir} is incomplete: remove it to regenerate or restore the missing files`);
    await mkdir(path.dirname(pkiDir), { recursive: true });
    const tmp = `${pkiDir}.${randomBytes(4).toString('hex')}.tmp`;
    await mkdir(tmp, { mode: 0o700 });
    await generateBase(tmp);
    try {
      await rename(tmp, pkiDir);
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    }
    base = await read();
  }
  return base as Record<(typeof BASE_FILES)[number], string>;
}

function covers(certPem: string, dnsNames: string[], ips: string[]): boolean {
  const have = subjectAltNames(certPem);
  return dnsNames.every((n) => have.dns.includes(n)) && ips.every((n) => have.ip.includes(n));
}

/**
 * The serving certificate and key in `<pkiDir>/serving.pem` (one file, so
 * replicas writing it at once never leave a certificate beside another
 * one's key), signed by `ca`, reused while it covers every required name,
 * and valid for 30 more days, else replaced (valid one year; the host name is added but not required,
 * so replicas sharing the folder keep one certificate).
 */
async function loadOrCreateServing(pkiDir: string, ca: CertificateAuthority, names: string[]): Promise<PemPair> {
  const ipRe = /^(\d{1,3}(\.\d{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]*)$/;
  const dnsNames = [...new Set(['localhost', ...names.filter((n) => !ipRe.test(n))])];
  const ips = [...new Set(['127.0.0.1', '::1', ...names.filter((n) => ipRe.test(n))])];
  const file = path.join(pkiDir, 'serving.pem');
  const text = await readIfExists(file);
  const certPem = text?.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/)?.[0];
  const keyPem = text?.match(/-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----\n?/)?.[0];
  const fresh = certPem !== undefined && certificateExpiry(certPem).getTime() > Date.now() + 30 * 24 * 3600 * 1000;
  if (certPem && keyPem && fresh && covers(certPem, dnsNames, ips)) return { certPem, keyPem };
  const pair = await ca.issue({ commonName: 'plinth', dnsNames: [...new Set([...dnsNames, hostname()])], ipAddresses: ips, usage: 'server', validDays: 365 });
  await writeSecret(file, pair.certPem + pair.keyPem);
  return pair;
}

/**
 * Reads a PEM bundle of one or more certificates, as kube-controller-manager
 * reads its --root-ca-file; throws naming the file when it holds none or
 * one does not parse.
 */
export async function readCaBundle(file: string): Promise<string> {
  const text = await readFile(file, 'utf8');
  const blocks = pemCertificates(text);
  if (blocks.length === 0) throw new Error(`error parsing root-ca-file at ${file}: data does not contain any valid RSA or ECDSA certificates`);
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (err) {
      throw new Error(`error parsing root-ca-file at ${file}: ${(err as Error).message}`);
    }
  }
  return blocks.map((b) => `${b}\n`).join('');
}

/**
 * Loads or creates the platform's PKI under `<dataDir>/pki`: the CA (10
 * years), the platform administrator's client certificate, the
 * ServiceAccount signing key and a serving certificate for localhost,
 * 127.0.0.1, ::1, the host name and `serverNames`. Operator files replace
 * their generated counterpart. Safe to call concurrently from replicas
 * sharing `dataDir`.
 */
export async function loadOrCreatePki(dataDir: string, serverNames: string[], files: PkiFiles = {}): Promise<ServingPki> {
  const pkiDir = path.resolve(dataDir, 'pki');
  const base = await loadOrCreateBase(pkiDir);
  const ca = await CertificateAuthority.load(base['ca.crt'], base['ca.key']);
  let serving: PemPair;
  if (files.tlsCertFile || files.tlsKeyFile) {
    if (!files.tlsCertFile || !files.tlsKeyFile) throw new Error('PLINTH_TLS_CERT_FILE and PLINTH_TLS_KEY_FILE must be set together');
    serving = { certPem: await readFile(files.tlsCertFile, 'utf8'), keyPem: await readFile(files.tlsKeyFile, 'utf8') };
  } else {
    serving = await loadOrCreateServing(pkiDir, ca, serverNames);
  }
  return {
    serving,
    clientCaPem: files.clientCaFile ? await readFile(files.clientCaFile, 'utf8') : base['ca.crt'],
    caPem: base['ca.crt'],
    operatorServingCert: Boolean(files.tlsCertFile),
    rootCaPem: files.rootCaFile ? await readCaBundle(files.rootCaFile) : undefined,
    admin: { certPem: base['admin.crt'], keyPem: base['admin.key'] },
    serviceAccountKeyPem: files.serviceAccountKeyFile ? await readFile(files.serviceAccountKeyFile, 'utf8') : base['sa.key'],
    ca,
  };
}

/** Injection token of the {@link ServingPki} loaded (or generated) before the server was created. */
export const SERVING_PKI = Symbol('SERVING_PKI');
