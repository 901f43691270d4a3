import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';

/** Where and as whom a webhook authorizer posts its SubjectAccessReviews. */
export interface WebhookConnection {
  /** The exact URL to POST to (the kubeconfig cluster's `server`, path included). */
  url: URL;
  /** PEM CA bundle to verify the server with; undefined: the system roots. */
  ca?: string;
  /** TLS server name to verify, when the kubeconfig names one (`tls-server-name`). */
  servername?: string;
  /** Client certificate and key (PEM), when the kubeconfig's user has them. */
  cert?: string;
  key?: string;
  /** Bearer token, when the kubeconfig's user has one. */
  token?: string;
}

type Raw = Record<string, unknown>;

function named(list: unknown, name: string | undefined, what: string): Raw {
  const items = Array.isArray(list) ? (list as Raw[]) : [];
  const found = name === undefined ? (items.length === 1 ? items[0] : undefined) : items.find((i) => i?.name === name);
  if (!found) throw new Error(name === undefined ? `no ${what} (give one, or a current-context)` : `${what} ${JSON.stringify(name)} not found`);
  return (found[what] as Raw | undefined) ?? {};
}

/** `<key>-data` (base64) or `<key>` (a file, relative to the kubeconfig's folder), as clientcmd reads them. */
function material(obj: Raw, key: string, dir: string): string | undefined {
  const data = obj[`${key}-data`];
  if (typeof data === 'string' && data) return Buffer.from(data, 'base64').toString('utf8');
  const file = obj[key];
  if (typeof file === 'string' && file) return readFileSync(path.resolve(dir, file), 'utf8');
  return undefined;
}

/**
 * Reads a webhook authorizer's kubeconfig as upstream's webhook client
 * does: the current context's cluster (`server`, which must be https, and
 * its CA, `tls-server-name`) and user (client certificate and key, or a
 * token or token file). Throws an Error saying what is missing or wrong.
 * Reads `file` and the files it names.
 */
export function readWebhookKubeconfig(file: string): WebhookConnection {
  const dir = path.dirname(file);
  const raw = parseYaml(readFileSync(file, 'utf8')) as Raw | null;
  if (!raw || typeof raw !== 'object') throw new Error('not a kubeconfig');
  const current = typeof raw['current-context'] === 'string' && raw['current-context'] ? (raw['current-context'] as string) : undefined;
  const contexts = Array.isArray(raw.contexts) ? raw.contexts : [];
  const context = current !== undefined || contexts.length > 0 ? named(raw.contexts, current, 'context') : {};
  const cluster = named(raw.clusters, context.cluster as string | undefined, 'cluster');
  const user = Array.isArray(raw.users) && raw.users.length > 0 ? named(raw.users, context.user as string | undefined, 'user') : {};
  const server = typeof cluster.server === 'string' ? cluster.server : '';
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new Error(`cluster server ${JSON.stringify(server)} is not a URL`);
  }
  if (url.protocol !== 'https:') throw new Error(`cluster server ${JSON.stringify(server)} must use https`);
  if (cluster['insecure-skip-tls-verify'] === true) throw new Error('insecure-skip-tls-verify is not supported: give the webhook\'s CA (certificate-authority-data)');
  const cert = material(user, 'client-certificate', dir);
  const key = material(user, 'client-key', dir);
  if (Boolean(cert) !== Boolean(key)) throw new Error('the user has a client certificate without its key, or a key without its certificate');
  let token = typeof user.token === 'string' && user.token ? user.token : undefined;
  if (!token && typeof user.tokenFile === 'string' && user.tokenFile) token = readFileSync(path.resolve(dir, user.tokenFile), 'utf8').trim();
  return {
    url,
    ca: material(cluster, 'certificate-authority', dir),
    servername: typeof cluster['tls-server-name'] === 'string' ? (cluster['tls-server-name'] as string) : undefined,
    cert,
    key,
    token,
  };
}
