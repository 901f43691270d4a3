import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';

/** The user credentials a kubeconfig carries: a client certificate or a bearer token. */
export interface KubeconfigCredentials {
  /** PEM of the CA that signed the serving certificate; omitted: the system's trust store. */
  caPem?: string;
  clientCertPem?: string;
  clientKeyPem?: string;
  token?: string;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** One context of a kubeconfig: its name (also its cluster's) and the server it points at. */
export interface KubeconfigContext {
  name: string;
  server: string;
}

/**
 * A kubeconfig (YAML text): one cluster and context per entry of
 * `contexts` (each cluster named as its context, trusting `creds.caPem`),
 * all using one user `userName` with `creds`; `current` is the current
 * context. The one renderer of kubeconfigs (the administrator's, a user's). Pure.
 */
export function renderKubeconfigFor(contexts: KubeconfigContext[], current: string, userName: string, creds: KubeconfigCredentials): string {
  const user: Record<string, string> = {};
  if (creds.clientCertPem) user['client-certificate-data'] = b64(creds.clientCertPem);
  if (creds.clientKeyPem) user['client-key-data'] = b64(creds.clientKeyPem);
  if (creds.token) user.token = creds.token;
  const ca = creds.caPem ? { 'certificate-authority-data': b64(creds.caPem) } : {};
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: contexts.map((c) => ({ name: c.name, cluster: { server: c.server, ...ca } })),
    contexts: contexts.map((c) => ({ name: c.name, context: { cluster: c.name, user: userName } })),
    'current-context': current,
    users: [{ name: userName, user }],
    preferences: {},
  });
}

/**
 * A kubeconfig (YAML text) for `url` with one cluster and context per tenant
 * (`plinth-<tenant>`, tenant `default` first and current), all using one
 * user with `creds`. Pure.
 */
export function renderKubeconfig(url: string, tenants: string[], creds: KubeconfigCredentials, userName = 'plinth-admin'): string {
  const all = ['default', ...tenants.filter((t) => t !== 'default')];
  const contexts = all.map((t) => ({ name: `plinth-${t}`, server: t === 'default' ? url : `${url}/clusters/${t}` }));
  return renderKubeconfigFor(contexts, 'plinth-default', userName, creds);
}

/** Writes `<dataDir>/kubeconfig` (owner-only: it holds the administrator's key) atomically; returns its path. */
export async function writeKubeconfig(dataDir: string, url: string, tenants: string[], creds: KubeconfigCredentials): Promise<string> {
  const file = path.resolve(dataDir, 'kubeconfig');
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, renderKubeconfig(url, tenants, creds), { mode: 0o600 });
  await rename(tmp, file);
  return file;
}
