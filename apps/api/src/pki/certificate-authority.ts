import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

/** ECDSA P-256 with SHA-256: what every certificate and key here uses (kubectl, Node and Go accept it). */
const EC_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

const DAY_MS = 24 * 3600 * 1000;

/** A certificate and its private key, both PEM. */
export interface PemPair {
  certPem: string;
  keyPem: string;
}

/** What a leaf certificate is for. */
export interface LeafRequest {
  /** The subject common name (the user name of a client certificate). */
  commonName: string;
  /** Subject organizations (the groups of a client certificate). */
  organizations?: string[];
  /** DNS names and IP addresses of a serving certificate. */
  dnsNames?: string[];
  ipAddresses?: string[];
  usage: 'server' | 'client';
  validDays: number;
}

function serialNumber(): string {
  const b = randomBytes(16);
  b[0] &= 0x7f; // positive
  return b.toString('hex');
}

function keyPem(pkcs8: ArrayBuffer): string {
  const b64 = Buffer.from(pkcs8).toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN PRIVATE KEY-----\n${b64}\n-----END PRIVATE KEY-----\n`;
}

function pemBody(pem: string, label: string): Buffer {
  const m = new RegExp(`-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]+)-----END ${label}-----`).exec(pem);
  if (!m) throw new Error(`no ${label} PEM block`);
  return Buffer.from(m[1].replace(/\s+/g, ''), 'base64');
}

async function newKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(EC_ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function exportKey(key: CryptoKey): Promise<string> {
  return keyPem(await webcrypto.subtle.exportKey('pkcs8', key));
}

function subjectName(commonName: string, organizations: string[] = []): x509.JsonName {
  return [{ CN: [commonName] }, ...organizations.map((o) => ({ O: [o] }))];
}

/**
 * A certificate authority able to sign serving and client certificates.
 * Immutable once made; signing has no side effect besides returning PEM.
 */
export class CertificateAuthority {
  private constructor(
    private readonly cert: x509.X509Certificate,
    private readonly key: CryptoKey,
    /** PEM of the CA certificate. */
    readonly certPem: string,
    /** PEM (PKCS#8) of the CA key. */
    readonly keyPem: string,
  ) {}

  /** Generates a self-signed CA named `commonName`, valid `validDays` (10 years by default). */
  static async generate(commonName: string, validDays = 3650): Promise<CertificateAuthority> {
    const keys = await newKeys();
    const now = Date.now();
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: serialNumber(),
      name: subjectName(commonName),
      notBefore: new Date(now - 5 * 60 * 1000),
      notAfter: new Date(now + validDays * DAY_MS),
      signingAlgorithm: EC_ALGORITHM,
      keys,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    const pem = cert.toString('pem');
    return new CertificateAuthority(cert, keys.privateKey, `${pem}\n`, await exportKey(keys.privateKey));
  }

  /** Loads a CA from its PEM certificate and PKCS#8 PEM key. Throws when either does not parse. */
  static async load(certPem: string, keyPemText: string): Promise<CertificateAuthority> {
    const cert = new x509.X509Certificate(pemBody(certPem, 'CERTIFICATE'));
    const key = await webcrypto.subtle.importKey('pkcs8', pemBody(keyPemText, 'PRIVATE KEY'), EC_ALGORITHM, true, ['sign']);
    return new CertificateAuthority(cert, key, certPem, keyPemText);
  }

  /** Signs a new leaf certificate with a fresh key. */
  async issue(req: LeafRequest): Promise<PemPair> {
    const keys = await newKeys();
    const now = Date.now();
    const extensions: x509.Extension[] = [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([req.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth]),
      await x509.AuthorityKeyIdentifierExtension.create(this.cert),
    ];
    const names = [
      ...(req.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
      ...(req.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
    ];
    if (names.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(names));
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serialNumber(),
      subject: subjectName(req.commonName, req.organizations),
      issuer: this.cert.subjectName,
      notBefore: new Date(now - 5 * 60 * 1000),
      notAfter: new Date(Math.min(now + req.validDays * DAY_MS, this.cert.notAfter.getTime())),
      signingAlgorithm: EC_ALGORITHM,
      publicKey: keys.publicKey,
      signingKey: this.key,
      extensions,
    });
    return { certPem: `${cert.toString('pem')}\n`, keyPem: await exportKey(keys.privateKey) };
  }

  /** When the CA certificate expires (no certificate it signs outlives it). */
  get notAfter(): Date {
    return this.cert.notAfter;
  }

  /** Signs a leaf (not a CA) certificate for `req.publicKey`; returns its PEM. No side effect. */
  async sign(req: RequestedCertificate): Promise<string> {
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serialNumber(),
      subject: req.subject,
      issuer: this.cert.subjectName,
      notBefore: req.notBefore,
      notAfter: new Date(Math.min(req.notAfter.getTime(), this.cert.notAfter.getTime())),
      signingAlgorithm: EC_ALGORITHM,
      publicKey: req.publicKey,
      signingKey: this.key,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        ...(req.keyUsages ? [new x509.KeyUsagesExtension(req.keyUsages, true)] : []),
        ...(req.extKeyUsages.length > 0 ? [new x509.ExtendedKeyUsageExtension(req.extKeyUsages)] : []),
        await x509.AuthorityKeyIdentifierExtension.create(this.cert),
        ...req.extensions,
      ],
    });
    return `${cert.toString('pem')}\n`;
  }
}

/** A certificate for a key the CA did not make (a CertificateSigningRequest's). */
export interface RequestedCertificate {
  publicKey: x509.PublicKey;
  subject: x509.Name;
  notBefore: Date;
  /** Capped at the CA's own expiry. */
  notAfter: Date;
  /** Key usage flags (x509.KeyUsageFlags). */
  keyUsages: number;
  /** Extended key usage OIDs. */
  extKeyUsages: string[];
  /** Further extensions (subject alternative names, a tenant binding). */
  extensions: x509.Extension[];
}

/** The DNS names and IP addresses in a PEM certificate's subjectAltName (empty when it has none). */
export function subjectAltNames(certPem: string): { dns: string[]; ip: string[] } {
  const cert = new x509.X509Certificate(pemBody(certPem, 'CERTIFICATE'));
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const items = san?.names.items ?? [];
  return { dns: items.filter((n) => n.type === 'dns').map((n) => n.value), ip: items.filter((n) => n.type === 'ip').map((n) => n.value) };
}

/** When a PEM certificate stops being valid. */
export function certificateExpiry(certPem: string): Date {
  return new x509.X509Certificate(pemBody(certPem, 'CERTIFICATE')).notAfter;
}
