import https from 'node:https';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import superagent from 'superagent';
import request from 'supertest';
import { Agent, setGlobalDispatcher } from 'undici';
import type { CertificateAuthority } from '../../apps/api/src/pki/certificate-authority.js';
import { loadOrCreatePki, type ServingPki } from '../../apps/api/src/pki/pki-store.js';

/**
 * How a test client presents itself: the CA it trusts (always), and a
 * client certificate and/or a bearer token (neither: anonymous).
 */
export interface ClientIdentity {
  caPem: string;
  certPem?: string;
  keyPem?: string;
  token?: string;
}

let pki: ServingPki | undefined;
let sharedDataDir: string | undefined;

/**
 * The data folder every in-process test server of this test file shares
 * (created on first use), so replicas share one CA, administrator
 * certificate and ServiceAccount signing key, as replicas sharing a data
 * volume do.
 */
export function sharedTestDataDir(): string {
  sharedDataDir ??= mkdtempSync(path.join(tmpdir(), 'plinth-test-data-'));
  return sharedDataDir;
}

/**
 * Makes `material` the default credentials of this process: supertest /
 * superagent and every `https` request through the global agent, and
 * `fetch` through undici's global dispatcher, trust its CA and present the
 * platform administrator's client certificate.
 */
export function installDefaultCredentials(material: ServingPki): void {
  pki = material;
  // superagent (under supertest) takes ca/cert/key and its agent from the request itself; its
  // prototype supplies them to every request that does not set its own. A keep-alive agent reuses
  // TLS connections between requests, as real clients do.
  const proto = (superagent as unknown as { Request: { prototype: Record<string, unknown> } }).Request.prototype;
  proto._ca = material.caPem;
  proto._cert = material.admin.certPem;
  proto._key = material.admin.keyPem;
  proto._agent = httpsAgent(adminIdentity());
  const opts = https.globalAgent.options as https.AgentOptions;
  opts.ca = material.caPem;
  opts.cert = material.admin.certPem;
  opts.key = material.admin.keyPem;
  setGlobalDispatcher(new Agent({ connect: { ca: material.caPem, cert: material.admin.certPem, key: material.admin.keyPem } }));
}

/** Loads (or creates) the PKI of `dataDir` and makes it the default, for servers run as child processes. Returns it. */
export async function useCredentialsOf(dataDir: string): Promise<ServingPki> {
  const material = await loadOrCreatePki(dataDir, []);
  installDefaultCredentials(material);
  return material;
}

function current(): ServingPki {
  if (!pki) throw new Error('no test server has been started in this process (startTestServer installs the credentials)');
  return pki;
}

/** The CA generated for the test servers (to sign further client certificates). */
export function testCertificateAuthority(): CertificateAuthority {
  return current().ca;
}

/** The PKI in use (CA PEM, administrator certificate, ServiceAccount key). */
export function testPki(): ServingPki {
  return current();
}

/** The platform administrator (the default identity of every harness client). */
export function adminIdentity(): ClientIdentity {
  const p = current();
  return { caPem: p.caPem, certPem: p.admin.certPem, keyPem: p.admin.keyPem };
}

/** No credentials at all: the server sees `system:anonymous`. */
export function anonymousIdentity(): ClientIdentity {
  return { caPem: current().caPem };
}

/** A bearer token and no client certificate. */
export function tokenIdentity(token: string): ClientIdentity {
  return { caPem: current().caPem, token };
}

/** A fresh client certificate for `user` with `groups` as its organizations, signed by the test CA. */
export async function certificateIdentity(user: string, groups: string[] = []): Promise<ClientIdentity> {
  const pair = await current().ca.issue({ commonName: user, organizations: groups, usage: 'client', validDays: 1 });
  return { caPem: current().caPem, certPem: pair.certPem, keyPem: pair.keyPem };
}

/** An https.Agent presenting `id`'s certificate (if any) and trusting its CA. */
export function httpsAgent(id: ClientIdentity): https.Agent {
  return new https.Agent({ ca: id.caPem, cert: id.certPem, key: id.keyPem, keepAlive: true });
}

/** An undici dispatcher presenting `id`'s certificate, for `fetch(url, { dispatcher })` with undici's fetch. */
export function undiciAgent(id: ClientIdentity): Agent {
  return new Agent({ connect: { ca: id.caPem, cert: id.certPem, key: id.keyPem } });
}

/** The headers `id` adds to every request (its bearer token). */
export function identityHeaders(id: ClientIdentity): Record<string, string> {
  return id.token ? { Authorization: `Bearer ${id.token}` } : {};
}

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head';

/** A supertest client of `url` acting as `id` (same methods as `request(url)`). */
export type RequestAs = Record<Method, (path: string) => request.Test>;

/**
 * `request(url)` as another identity: every request presents `id`'s
 * certificate (or none) and carries its token. Use `request(s.url)` for the
 * platform administrator.
 */
export function requestAs(url: string, id: ClientIdentity): RequestAs {
  const headers = identityHeaders(id);
  const agent = httpsAgent(id);
  const make = (m: Method) => (p: string) => {
    const t = request(url)[m](p);
    // Own properties shadow the administrator defaults installed on the prototype (undefined: none).
    Object.assign(t, { _ca: id.caPem, _cert: id.certPem, _key: id.keyPem, _agent: agent });
    for (const [k, v] of Object.entries(headers)) t.set(k, v);
    return t;
  };
  return { get: make('get'), post: make('post'), put: make('put'), patch: make('patch'), delete: make('delete'), head: make('head') };
}
