import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { parse } from 'yaml';

/** Who calls the API and where: read from the caller's own kubeconfig. */
export interface Caller {
  /** The server URL of the context, without any `/clusters/<tenant>` suffix. */
  baseUrl: string;
  caPem?: string;
  certPem?: string;
  keyPem?: string;
  token?: string;
  insecure: boolean;
}

type Named<T> = { name: string } & T;

function dataOrFile(dir: string, data: unknown, file: unknown): string | undefined {
  if (typeof data === 'string') return Buffer.from(data, 'base64').toString('utf8');
  if (typeof file === 'string') return readFileSync(path.resolve(dir, file), 'utf8');
  return undefined;
}

/**
 * The credentials and server of `context` (default: the current one) in
 * the kubeconfig at `file`. Throws an Error naming what is missing.
 */
export function readCaller(file: string, context?: string): Caller {
  const doc = parse(readFileSync(file, 'utf8')) as {
    'current-context'?: string;
    contexts?: Named<{ context: { cluster: string; user: string } }>[];
    clusters?: Named<{ cluster: Record<string, unknown> }>[];
    users?: Named<{ user: Record<string, unknown> }>[];
  };
  const name = context ?? doc['current-context'];
  const ctx = doc.contexts?.find((c) => c.name === name)?.context;
  if (!ctx) throw new Error(`context "${name ?? ''}" not found in ${file}`);
  const cluster = doc.clusters?.find((c) => c.name === ctx.cluster)?.cluster;
  const user = doc.users?.find((u) => u.name === ctx.user)?.user ?? {};
  if (!cluster || typeof cluster.server !== 'string') throw new Error(`cluster "${ctx.cluster}" of context "${name}" has no server in ${file}`);
  const dir = path.dirname(file);
  return {
    baseUrl: cluster.server.replace(/\/+$/, '').replace(/\/clusters\/[^/]+$/, ''),
    caPem: dataOrFile(dir, cluster['certificate-authority-data'], cluster['certificate-authority']),
    certPem: dataOrFile(dir, user['client-certificate-data'], user['client-certificate']),
    keyPem: dataOrFile(dir, user['client-key-data'], user['client-key']),
    token: typeof user.token === 'string' ? user.token : undefined,
    insecure: cluster['insecure-skip-tls-verify'] === true,
  };
}

/** One JSON answer: its status code and parsed body. */
export interface JsonAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** How one request of a CLI is sent: its body (with its type) and what it accepts. */
export interface CallerRequestOptions {
  body?: Buffer;
  /** The body's type; application/json by default. */
  contentType?: string;
  accept: string;
  userAgent: string;
}

/** Sends one request as `caller` (its certificate or token, its CA); resolves with the answer as it starts (rejects only when the server cannot be reached). */
export function callerRequest(caller: Caller, method: string, url: string, o: CallerRequestOptions): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, {
      method,
      // Its own agent: a process's global agent's options (a default certificate) would override the caller's own.
      agent: false,
      ca: caller.caPem,
      cert: caller.certPem,
      key: caller.keyPem,
      rejectUnauthorized: !caller.insecure,
      headers: {
        Accept: o.accept,
        'User-Agent': o.userAgent,
        ...(o.body ? { 'Content-Type': o.contentType ?? 'application/json', 'Content-Length': String(o.body.length) } : {}),
        ...(caller.token ? { Authorization: `Bearer ${caller.token}` } : {}),
      },
    });
    req.on('response', resolve);
    req.on('error', reject);
    req.end(o.body);
  });
}

/** Sends one JSON request as `caller`; resolves with any answer (rejects only when the server cannot be reached). */
export async function requestJson(caller: Caller, method: string, url: string, body?: unknown): Promise<JsonAnswer> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const res = await callerRequest(caller, method, url, { body: payload, accept: 'application/json', userAgent: 'plinth-kubeconfig' });
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    parsed = { message: text };
  }
  return { status: res.statusCode ?? 0, body: parsed };
}
