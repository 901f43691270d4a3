import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ApiError } from '@plinth/apimachinery';
import { isStorageError, type Storage, type TenantSnapshotRepository } from '@plinth/storage';
import { sendPlain, sendStream } from '../http/response-writer.js';
import { PLATFORM_TENANT, TENANCY_GROUP, type TenantObject, TENANT_STORAGE_RESOURCE } from '../kinds/tenant/tenant-api.js';
import { tenantResource } from '../kinds/tenant/tenant.resource.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import { mapStorageError } from '../resource-store/storage-errors.mapper.js';
import { type ExportPoint, prepareExport } from './snapshot-export.js';
import { parseSnapshotPaced, SNAPSHOT_MEDIA_TYPE, SnapshotFormatError } from './snapshot-format.js';
import { SnapshotPacer } from './snapshot-pacer.js';
import { type HistoryTarget, NotInHistoryError, restoreFromHistory } from './history-restore.js';
import { RestoreUndoneError, restoreSnapshot, TenantNotEmptyError } from './snapshot-restore.js';
import { RecipientError } from './snapshot-secrets.js';

/** Injection token of {@link TenantSnapshotService}. */
export const TENANT_SNAPSHOTS = Symbol('TenantSnapshotService');

/** The header of an export's answer that names the revision it is consistent at. */
export const SNAPSHOT_REVISION_HEADER = 'X-Plinth-Snapshot-Revision';

/** What the service reads and writes through. */
export interface TenantSnapshotDeps {
  storage: Pick<Storage, 'get' | 'list' | 'currentRevision'>;
  snapshots: Pick<TenantSnapshotRepository, 'resourcesAt' | 'revisionAt' | 'checkHistory' | 'currentKeys' | 'writeBatch'>;
  /** The served kinds of a tenant (what a restore from history may name). */
  kinds: Pick<ResourceRegistry, 'prepare' | 'all'>;
  logger: Logger;
}

/**
 * The body of a restore from history: the point (`at`: a revision or an
 * RFC 3339 time), namespaces to bring back whole, and single objects
 * (`resource`: plural[.group], as kubectl names them).
 */
export interface HistoryRestoreRequest {
  at?: unknown;
  namespaces?: unknown;
  objects?: unknown;
}

/** The query of an export: `resourceVersion` or `at` (a revision or an RFC 3339 time), `recipient` (repeatable). */
export interface ExportQuery {
  at?: string;
  resourceVersion?: string;
  recipients: string[];
}

const target = (name: string) => ({ group: TENANCY_GROUP, kind: 'tenants', name });

/**
 * Tenant snapshots over HTTP: streams a tenant's export (the Tenant's
 * `snapshot` subresource for the platform, `/clusters/{tenant}/snapshot` for
 * the tenant's own members) and restores a snapshot into an existing
 * tenant (POST to the subresource). Every failure is a Status.
 */
export class TenantSnapshotService {
  constructor(private readonly deps: TenantSnapshotDeps) {}

  /** The Tenant object `name`, or 404. */
  private async tenant(name: string): Promise<TenantObject> {
    const t = await this.deps.storage.get({ tenant: PLATFORM_TENANT, resource: TENANT_STORAGE_RESOURCE, namespace: '', name });
    if (!t) throw ApiError.notFound(target(name));
    return t.body as TenantObject;
  }

  /** Streams the snapshot of tenant `name` at the point `query` names (sealing its Secrets to `query.recipients`). Errors before the first byte are Statuses. */
  async export(req: FastifyRequest, reply: FastifyReply, name: string, query: ExportQuery): Promise<void> {
    const tenant = await this.tenant(name);
    const point = parsePoint(query.resourceVersion ?? query.at);
    let prepared;
    try {
      prepared = await prepareExport(this.deps, tenant, point, query.recipients);
    } catch (err) {
      if (err instanceof RecipientError) throw ApiError.badRequest(err.message);
      if (isStorageError(err, 'Expired')) throw ApiError.gone(expiredMessage(err.message, err.oldestRevision));
      mapStorageError(err, tenantResource, name);
    }
    const started = Date.now();
    const body = Readable.from(prepared.chunks, { objectMode: false });
    body.once('end', () => this.deps.logger.info({ tenant: name, revision: prepared.revision, ms: Date.now() - started }, 'tenant snapshot exported'));
    reply.header(SNAPSHOT_REVISION_HEADER, String(prepared.revision));
    sendStream(req, reply, SNAPSHOT_MEDIA_TYPE, body);
  }

  /**
   * Restores the snapshot in `body` into tenant `name` (which must exist
   * and be Active); answers a Success Status. With `ownTenantOnly` (a
   * tenant's own members, `POST /clusters/{name}/snapshot`), a snapshot
   * whose header names another tenant (by uid) is refused with 403.
   */
  async restore(req: FastifyRequest, reply: FastifyReply, name: string, body: Buffer | undefined, replace: boolean, options: { ownTenantOnly?: boolean } = {}): Promise<void> {
    const tenant = await this.tenant(name);
    if (tenant.metadata.deletionTimestamp || tenant.status?.phase !== 'Active') {
      throw ApiError.conflict(target(name), `tenant ${name} is ${tenant.status?.phase ?? 'not provisioned yet'}: a snapshot restores only into an Active tenant`);
    }
    let parsed;
    const pacer = new SnapshotPacer();
    try {
      parsed = await parseSnapshotPaced(body ?? Buffer.alloc(0), () => pacer.step());
    } catch (err) {
      if (err instanceof SnapshotFormatError) throw ApiError.badRequest(`invalid snapshot: ${err.message}; nothing was restored`);
      throw err;
    }
    const from = parsed.header.tenant;
    if (options.ownTenantOnly && from.uid !== tenant.metadata.uid) {
      throw ApiError.forbidden(
        target(name),
        `a tenant's members restore only snapshots of their own tenant (${name}, uid ${tenant.metadata.uid}); this one is of tenant ${from.name} (uid ${from.uid ?? 'none'}): ask the platform to restore it`,
      );
    }
    let result;
    try {
      result = await restoreSnapshot({ ...this.deps, pacer: () => pacer }, name, parsed, { replace });
    } catch (err) {
      if (err instanceof SnapshotFormatError) throw ApiError.badRequest(`invalid snapshot: ${err.message}; nothing was restored`);
      if (err instanceof TenantNotEmptyError) throw ApiError.conflict(target(name), err.message);
      if (err instanceof RestoreUndoneError) throw undoneError(err, name);
      mapStorageError(err, tenantResource, name);
    }
    this.deps.logger.info({ tenant: name, from: parsed.header.tenant.name, snapshotRevision: parsed.header.revision, ...result }, 'tenant snapshot restored');
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      message: `restored ${result.objects} objects of tenant ${parsed.header.tenant.name} at revision ${parsed.header.revision} into tenant ${name} (${result.removed} removed first); resourceVersions up to ${result.revision}`,
      code: 200,
      details: { name, group: TENANCY_GROUP, kind: 'tenants' },
    };
    sendPlain(req, reply, 200, status);
  }

  /**
   * Brings back into live tenant `name` what the JSON `body` names
   * ({@link HistoryRestoreRequest}) as it was at its point, from the kept
   * change history; answers a Success Status. 400 for a malformed request
   * or a name that did not exist then, 410 beyond the kept history.
   */
  async restoreHistory(req: FastifyRequest, reply: FastifyReply, name: string, body: Buffer | undefined): Promise<void> {
    let request: HistoryRestoreRequest;
    try {
      request = JSON.parse((body ?? Buffer.alloc(0)).toString('utf8')) as HistoryRestoreRequest;
    } catch {
      throw ApiError.badRequest('the body must be JSON: {"at": "<revision or RFC 3339 time>", "namespaces": [...], "objects": [{"resource", "namespace", "name"}]}');
    }
    if (typeof request !== 'object' || request === null) throw ApiError.badRequest('the body must be a JSON object');
    const point = parsePoint(typeof request.at === 'string' ? request.at : typeof request.at === 'number' ? String(request.at) : undefined);
    if (point.revision === undefined && point.time === undefined) throw ApiError.badRequest('at: required: the revision or RFC 3339 time to restore from');
    const targets = await this.targets(name, request);
    let result;
    try {
      result = await restoreFromHistory(this.deps, name, point, targets);
    } catch (err) {
      if (err instanceof NotInHistoryError) throw ApiError.badRequest(err.message);
      if (isStorageError(err, 'Expired')) throw ApiError.gone(expiredMessage(err.message, err.oldestRevision));
      mapStorageError(err, tenantResource, name);
    }
    this.deps.logger.info({ tenant: name, ...result }, 'tenant objects restored from history');
    const what = targets.map((t) => ('def' in t ? `${t.def.resource} ${t.def.namespaced ? `${t.namespace}/` : ''}${t.name}` : `namespace ${t.namespace}`)).join(', ');
    sendPlain(req, reply, 200, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      message: `restored ${result.objects} objects of tenant ${name} as they were at revision ${result.revision} (${what}); resourceVersions up to ${result.written}`,
      code: 200,
      details: { name, group: TENANCY_GROUP, kind: 'tenants' },
    });
  }

  /** The targets a request names, resolved against the tenant's served kinds. Throws ApiError 400. */
  private async targets(tenant: string, r: HistoryRestoreRequest): Promise<HistoryTarget[]> {
    const out: HistoryTarget[] = [];
    const list = (v: unknown, field: string): unknown[] => {
      if (v === undefined) return [];
      if (!Array.isArray(v)) throw ApiError.badRequest(`${field}: must be a list`);
      return v;
    };
    for (const [i, ns] of list(r.namespaces, 'namespaces').entries()) {
      if (typeof ns !== 'string' || !ns) throw ApiError.badRequest(`namespaces[${i}]: must be a namespace name`);
      out.push({ namespace: ns });
    }
    await this.deps.kinds.prepare(tenant);
    const kinds = this.deps.kinds.all(tenant);
    for (const [i, o] of list(r.objects, 'objects').entries()) {
      const obj = o as { resource?: unknown; namespace?: unknown; name?: unknown };
      if (typeof obj?.resource !== 'string' || typeof obj.name !== 'string' || !obj.name) throw ApiError.badRequest(`objects[${i}]: needs resource (plural[.group]) and name`);
      const dot = obj.resource.indexOf('.');
      const [plural, group] = dot < 0 ? [obj.resource, ''] : [obj.resource.slice(0, dot), obj.resource.slice(dot + 1)];
      const def = kinds.find((d) => d.resource === plural && d.group === group);
      if (!def) throw ApiError.badRequest(`objects[${i}]: the server doesn't have a resource type "${obj.resource}"`);
      const namespace = typeof obj.namespace === 'string' ? obj.namespace : '';
      if (def.namespaced && !namespace) throw ApiError.badRequest(`objects[${i}]: ${obj.resource} is namespaced: name its namespace`);
      out.push({ def, namespace: def.namespaced ? namespace : '', name: obj.name });
    }
    if (out.length === 0) throw ApiError.badRequest('name at least one namespace or object to restore');
    return out;
  }
}

/**
 * The point of an export from the query: nothing (the newest state), a
 * revision (digits), or an RFC 3339 time. Throws ApiError 400 otherwise.
 */
export function parsePoint(value: string | undefined): ExportPoint {
  if (value === undefined || value === '' || value === '0') return {};
  if (/^\d+$/.test(value)) {
    const revision = Number(value);
    if (!Number.isSafeInteger(revision)) throw ApiError.badRequest(`invalid revision ${value}`);
    return { revision };
  }
  const time = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value) ? new Date(value) : undefined;
  if (!time || Number.isNaN(time.getTime())) throw ApiError.badRequest(`invalid point in time ${JSON.stringify(value)}: a resourceVersion or an RFC 3339 time`);
  return { time };
}

/**
 * The Status of a restore that failed half-way: the failure's own (403 for
 * a tenant limit or quota, 503 for a shard gone...), its message saying
 * that what was written was removed again, or that it could not be.
 */
function undoneError(err: RestoreUndoneError, name: string): ApiError {
  let mapped: unknown = err.cause;
  try {
    mapStorageError(err.cause, tenantResource, name);
  } catch (e) {
    mapped = e;
  }
  const api = mapped instanceof ApiError ? mapped : new ApiError(500, 'InternalError', err.message);
  const tail = err.undone
    ? `; nothing was restored (the ${err.written} objects written before the failure were removed again and what they had replaced put back)`
    : `; the restore stopped after ${err.written} objects and could not remove them again: restore again with replace=true`;
  return new ApiError(api.code, api.status.reason ?? 'InternalError', `${api.message}${tail}`, api.status.details, api.headers);
}

/** The message of a 410 for a point beyond the kept history, naming the oldest revision available when known. */
function expiredMessage(message: string, oldest: number | undefined): string {
  return oldest === undefined || message.includes('oldest') ? message : `${message}; the oldest revision available is ${oldest}`;
}
