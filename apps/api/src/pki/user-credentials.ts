import 'reflect-metadata';
import { renderKubeconfigFor } from './kubeconfig.writer.js';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

type CreateParams = Parameters<typeof x509.Pkcs10CertificateRequestGenerator.create>[0];

const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A fresh key and a CERTIFICATE REQUEST for it, both PEM. */
export interface ClientRequest {
  keyPem: string;
  csrPem: string;
}

/**
 * Generates an ECDSA P-256 key and a certificate request for user `user`
 * with `groups` as organizations (what the x509 authenticator reads) and
 * `uris` as URI alternative names. No side effect besides returning them.
 */
export async function generateClientRequest(user: string, groups: string[] = [], uris: string[] = []): Promise<ClientRequest> {
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create(
    {
      name: [{ CN: [user] }, ...groups.map((g) => ({ O: [g] }))],
      extensions: uris.length > 0 ? [new x509.SubjectAlternativeNameExtension(uris.map((value) => ({ type: 'url' as const, value })))] : [],
      keys: keys as unknown as CreateParams['keys'], signingAlgorithm: EC },
    webcrypto as unknown as Parameters<typeof x509.Pkcs10CertificateRequestGenerator.create>[1],
  );
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64');
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n`;
  return { keyPem, csrPem: `${csr.toString('pem')}\n` };
}

/** What a user's kubeconfig holds. */
export interface UserKubeconfig {
  /** The tenant's URL (`https://host:port/clusters/<tenant>`, or the base URL for the platform scope). */
  server: string;
  /** The CA to trust for the server, PEM; undefined: the system's. */
  caPem?: string;
  certPem: string;
  keyPem: string;
  /** The context's name (`<user>@<tenant>`). */
  context: string;
  user: string;
}

/** A kubeconfig (YAML text) with one cluster, user and current context, all named `k.context`. Pure. */
export function renderUserKubeconfig(k: UserKubeconfig): string {
  return renderKubeconfigFor([{ name: k.context, server: k.server }], k.context, k.context, { caPem: k.caPem, clientCertPem: k.certPem, clientKeyPem: k.keyPem });
}
