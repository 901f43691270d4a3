import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Writable } from 'node:stream';
import { generateX25519Identity, identityToRecipient } from 'age-encryption';
import { type ParsedSnapshot, parseSnapshot, SNAPSHOT_MEDIA_TYPE, SnapshotWriter } from '../snapshots/snapshot-format.js';
import { openSealed } from '../snapshots/snapshot-secrets.js';
import { type Caller, callerRequest, requestJson } from './caller-kubeconfig.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';

/** Writes one progress line (stderr). */
export type Progress = (line: string) => void;

/** A request answered with an error Status: its message is the one line the CLI prints. */
export class CliError extends Error {}

function send(caller: Caller, method: string, url: string, body?: Buffer, contentType?: string): Promise<IncomingMessage> {
  return callerRequest(caller, method, url, { body, contentType, accept: `${SNAPSHOT_MEDIA_TYPE}, application/json`, userAgent: 'plinth-tenant' });
}

async function readAll(res: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** The message of an error answer (a Status), or its status line. */
async function failure(res: IncomingMessage, what: string): Promise<CliError> {
  const text = (await readAll(res)).toString('utf8');
  let message = text.trim().split('\n')[0] || `HTTP ${res.statusCode}`;
  try {
    const status = JSON.parse(text) as { message?: string };
    if (status.message) message = status.message;
  } catch {
    // not a Status: the first line of the body stands
  }
  return new CliError(`${what}: ${message} (HTTP ${res.statusCode})`);
}

/** What an export asks for. */
export interface ExportOptions {
  tenant: string;
  at?: string;
  recipients: string[];
}

/**
 * Streams the snapshot of `o.tenant` into `out`: from the Tenant's
 * `snapshot` subresource, or, when the caller may not read it there (403),
 * from `/clusters/{tenant}/snapshot` (a tenant's own member). Checks the
 * stream as it goes (trailer present, count and SHA-256 equal); throws
 * CliError otherwise or on an error answer. Returns the revision and the
 * number of objects.
 */
export async function exportSnapshot(caller: Caller, o: ExportOptions, out: Writable, progress: Progress): Promise<{ revision: number; objects: number; bytes: number }> {
  const q = new URLSearchParams();
  if (o.at) q.set('at', o.at);
  for (const r of o.recipients) q.append('recipient', r);
  const qs = q.size > 0 ? `?${q}` : '';
  let res = await send(caller, 'GET', `${caller.baseUrl}${TENANTS}/${encodeURIComponent(o.tenant)}/snapshot${qs}`);
  if (res.statusCode === 403) {
    res.resume();
    res = await send(caller, 'GET', `${caller.baseUrl}/clusters/${encodeURIComponent(o.tenant)}/snapshot${qs}`);
  }
  if (res.statusCode !== 200) throw await failure(res, `export of tenant ${o.tenant}`);
  const revision = Number(res.headers['x-plinth-snapshot-revision'] ?? 0);
  progress(`exporting tenant ${o.tenant} at revision ${revision}`);
  const hash = createHash('sha256');
  let pending = '';
  let objects = 0;
  let bytes = 0;
  let trailer: { objects: number; sha256: string } | undefined;
  let lastReport = Date.now();
  for await (const chunk of res) {
    const b = chunk as Buffer;
    bytes += b.length;
    if (!out.write(b)) await new Promise((r) => out.once('drain', r));
    pending += b.toString('utf8');
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl + 1);
      pending = pending.slice(nl + 1);
      if (line.startsWith('{"end":')) trailer = (JSON.parse(line) as { end: { objects: number; sha256: string } }).end;
      else {
        hash.update(line);
        if (line.startsWith('{"record":')) objects++;
      }
    }
    if (Date.now() - lastReport > 2000) {
      lastReport = Date.now();
      progress(`  ${objects} objects, ${(bytes / 1048576).toFixed(1)} MiB`);
    }
  }
  if (!trailer) throw new CliError(`export of tenant ${o.tenant}: the stream ended without its trailer after ${objects} objects (the server failed mid-way); the output is incomplete`);
  if (trailer.objects !== objects || trailer.sha256 !== hash.digest('hex')) throw new CliError(`export of tenant ${o.tenant}: the stream does not match its trailer; the output is damaged`);
  progress(`exported ${objects} objects (${(bytes / 1048576).toFixed(1)} MiB) of tenant ${o.tenant} at revision ${revision}`);
  return { revision, objects, bytes };
}

/** What an import asks for. */
export interface ImportOptions {
  tenant: string;
  shard?: string;
  identities: string[];
  replace?: boolean;
  /** How long to wait for the new tenant to become Active. */
  waitMs?: number;
}

/**
 * Imports the snapshot `bytes` as tenant `o.tenant`: checks it whole (a
 * damaged or truncated snapshot is refused before anything is sent),
 * opens its Secrets with `o.identities`, creates the Tenant (the
 * snapshot's spec; `o.shard` or the placement's choice) unless it exists,
 * waits until it is Active, and posts the snapshot (Secrets in the clear,
 * over TLS only) to its `snapshot` subresource; a caller who may not
 * create Tenants (a tenant's owner) posts it to `/clusters/{tenant}/snapshot`
 * instead. Throws CliError.
 */
export async function importSnapshot(caller: Caller, bytes: Buffer, o: ImportOptions, progress: Progress): Promise<string> {
  let parsed: ParsedSnapshot;
  try {
    parsed = parseSnapshot(bytes);
    parsed.header = await openSealed(parsed.header, parsed.records, o.identities);
  } catch (err) {
    throw new CliError(`invalid snapshot: ${(err as Error).message}; nothing was imported`);
  }
  progress(`snapshot of tenant ${parsed.header.tenant.name} at revision ${parsed.header.revision}: ${parsed.records.length} objects`);
  const { shard: _source, ...spec } = parsed.header.tenant.spec;
  const tenant = {
    apiVersion: 'tenancy.plinth.dev/v1beta1',
    kind: 'Tenant',
    metadata: { name: o.tenant, ...(parsed.header.tenant.labels ? { labels: parsed.header.tenant.labels } : {}) },
    spec: { ...spec, ...(o.shard ? { shard: o.shard } : {}) },
  };
  const created = await requestJson(caller, 'POST', `${caller.baseUrl}${TENANTS}`, tenant);
  // Not the platform (no Tenant to create): a tenant's own member restores a snapshot of the tenant into it.
  if (created.status === 403) return restoreOwn(caller, parsed, o, progress);
  if (created.status !== 201 && !(created.status === 409 && created.body.reason === 'AlreadyExists')) {
    throw new CliError(`creating tenant ${o.tenant}: ${String(created.body.message ?? `HTTP ${created.status}`)} (HTTP ${created.status})`);
  }
  progress(created.status === 201 ? `created tenant ${o.tenant}; waiting until it is Active` : `tenant ${o.tenant} exists; restoring into it`);
  const deadline = Date.now() + (o.waitMs ?? 120_000);
  for (;;) {
    const got = await requestJson(caller, 'GET', `${caller.baseUrl}${TENANTS}/${encodeURIComponent(o.tenant)}`);
    if (got.status === 200 && (got.body.status as { phase?: string } | undefined)?.phase === 'Active') break;
    if (Date.now() > deadline) throw new CliError(`tenant ${o.tenant} did not become Active in time`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const w = new SnapshotWriter();
  const lines = [w.header(parsed.header), ...parsed.records.map((r) => w.record(r)), w.trailer()];
  const body = Buffer.concat(lines);
  progress(`restoring ${parsed.records.length} objects (${(body.length / 1048576).toFixed(1)} MiB) into tenant ${o.tenant}`);
  const res = await send(caller, 'POST', `${caller.baseUrl}${TENANTS}/${encodeURIComponent(o.tenant)}/snapshot${o.replace ? '?replace=true' : ''}`, body, SNAPSHOT_MEDIA_TYPE);
  if (res.statusCode !== 200) throw await failure(res, `restore into tenant ${o.tenant}`);
  const status = JSON.parse((await readAll(res)).toString('utf8')) as { message?: string };
  progress(status.message ?? 'restored');
  return status.message ?? '';
}

/** Posts the opened snapshot to `/clusters/{tenant}/snapshot` (the tenant's own members' path: its RBAC, its own snapshots only). */
async function restoreOwn(caller: Caller, parsed: ParsedSnapshot, o: ImportOptions, progress: Progress): Promise<string> {
  const w = new SnapshotWriter();
  const body = Buffer.concat([w.header(parsed.header), ...parsed.records.map((r) => w.record(r)), w.trailer()]);
  progress(`restoring ${parsed.records.length} objects (${(body.length / 1048576).toFixed(1)} MiB) into tenant ${o.tenant} as its member`);
  const res = await send(caller, 'POST', `${caller.baseUrl}/clusters/${encodeURIComponent(o.tenant)}/snapshot${o.replace ? '?replace=true' : ''}`, body, SNAPSHOT_MEDIA_TYPE);
  if (res.statusCode !== 200) throw await failure(res, `restore into tenant ${o.tenant}`);
  const status = JSON.parse((await readAll(res)).toString('utf8')) as { message?: string };
  progress(status.message ?? 'restored');
  return status.message ?? '';
}

/**
 * Clones tenant `from` (at `at`, else now) into a new tenant `to`: exports
 * it with its Secrets sealed to a key made for this clone alone and held
 * in memory, then imports that snapshot. Throws CliError.
 */
export async function cloneTenant(caller: Caller, from: string, to: string, at: string | undefined, shard: string | undefined, progress: Progress): Promise<void> {
  const identity = await generateX25519Identity();
  const chunks: Buffer[] = [];
  const sink = { write: (b: Buffer) => chunks.push(b) > 0, once: () => undefined } as unknown as Writable;
  await exportSnapshot(caller, { tenant: from, at, recipients: [await identityToRecipient(identity)] }, sink, progress);
  await importSnapshot(caller, Buffer.concat(chunks), { tenant: to, shard, identities: [identity] }, progress);
}

/** What a restore from history asks for: `at`, and targets as the CLI takes them (`namespace/NAME`, `RESOURCE[.GROUP]/NAME`). */
export interface HistoryOptions {
  tenant: string;
  at: string;
  targets: string[];
  /** The namespace of `RESOURCE/NAME` targets of namespaced kinds. */
  namespace?: string;
}

/**
 * Brings back into live tenant `o.tenant` what `o.targets` name as it was
 * at `o.at`, from the kept history: through the Tenant's `restore`
 * subresource, or, when the caller may not use it (403), through
 * `/clusters/{tenant}/restore` (a tenant's own member). Returns the
 * server's message; throws CliError.
 */
export async function restoreFromHistory(caller: Caller, o: HistoryOptions, progress: Progress): Promise<string> {
  const namespaces: string[] = [];
  const objects: Array<{ resource: string; namespace?: string; name: string }> = [];
  for (const t of o.targets) {
    const slash = t.indexOf('/');
    if (slash <= 0 || slash === t.length - 1) throw new CliError(`${JSON.stringify(t)}: name namespace/NAME or RESOURCE/NAME`);
    const [resource, name] = [t.slice(0, slash), t.slice(slash + 1)];
    if (['namespace', 'namespaces', 'ns'].includes(resource)) namespaces.push(name);
    else objects.push({ resource, name, ...(o.namespace ? { namespace: o.namespace } : {}) });
  }
  const body = Buffer.from(JSON.stringify({ at: o.at, namespaces, objects }));
  progress(`restoring ${o.targets.join(', ')} of tenant ${o.tenant} as they were at ${o.at}`);
  let res = await send(caller, 'POST', `${caller.baseUrl}${TENANTS}/${encodeURIComponent(o.tenant)}/restore`, body);
  if (res.statusCode === 403) {
    res.resume();
    res = await send(caller, 'POST', `${caller.baseUrl}/clusters/${encodeURIComponent(o.tenant)}/restore`, body);
  }
  if (res.statusCode !== 200) throw await failure(res, `restore of tenant ${o.tenant}`);
  const status = JSON.parse((await readAll(res)).toString('utf8')) as { message?: string };
  progress(status.message ?? 'restored');
  return status.message ?? '';
}
