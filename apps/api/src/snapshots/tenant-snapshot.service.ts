import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ApiError } from '@plinth/apimachinery';
import { isStorageError, type Storage, type TenantSnapshotRepository } from '@plinth/storage';
import { sendPlain, sendStream } from '../http/response-writer.js';
import { PLATFORM_TENANT, TENANCY_GROUP, type TenantObject, TENANT_STORAGE_RESOURCE } from '../kinds/tenant/tenant-api.js';
import { tenantResource } from '../kinds/tenant/tenant.resource.js';
import { mapStorageError } from '../resource-store/storage-errors.mapper.js';
import { type ExportPoint, prepareExport } from './snapshot-export.js';
import { parseSnapshot, SNAPSHOT_MEDIA_TYPE, SnapshotFormatError } from './snapshot-format.js';
import { restoreSnapshot, TenantNotEmptyError } from './snapshot-restore.js';
import { RecipientError } from './snapshot-secrets.js';

/** Injection token of {@link TenantSnapshotService}. */
export const TENANT_SNAPSHOTS = Symbol('TenantSnapshotService');

/** The header of an export's answer that names the revision it is consistent at. */
export const SNAPSHOT_REVISION_HEADER = 'X-Plinth-Snapshot-Revision';

/** What the service reads and writes through. */
export interface TenantSnapshotDeps {
  storage: Pick<Storage, 'get' | 'list' | 'currentRevision'>;
  snapshots: Pick<TenantSnapshotRepository, 'resourcesAt' | 'revisionAt' | 'currentKeys' | 'writeBatch'>;
  logger: Logger;
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
      if (isStorageError(err, 'Expired')) throw ApiError.gone(err.message);
      mapStorageError(err, tenantResource, name);
    }
    const started = Date.now();
    const body = Readable.from(prepared.chunks, { objectMode: false });
    body.once('end', () => this.deps.logger.info({ tenant: name, revision: prepared.revision, ms: Date.now() - started }, 'tenant snapshot exported'));
    reply.header(SNAPSHOT_REVISION_HEADER, String(prepared.revision));
    sendStream(req, reply, SNAPSHOT_MEDIA_TYPE, body);
  }

  /** Restores the snapshot in `body` into tenant `name` (which must exist and be Active); answers a Success Status. */
  async restore(req: FastifyRequest, reply: FastifyReply, name: string, body: Buffer | undefined, replace: boolean): Promise<void> {
    const tenant = await this.tenant(name);
    if (tenant.metadata.deletionTimestamp || tenant.status?.phase !== 'Active') {
      throw ApiError.conflict(target(name), `tenant ${name} is ${tenant.status?.phase ?? 'not provisioned yet'}: a snapshot restores only into an Active tenant`);
    }
    let parsed;
    try {
      parsed = parseSnapshot(body ?? Buffer.alloc(0));
    } catch (err) {
      if (err instanceof SnapshotFormatError) throw ApiError.badRequest(`invalid snapshot: ${err.message}; nothing was restored`);
      throw err;
    }
    let result;
    try {
      result = await restoreSnapshot(this.deps, name, parsed, { replace });
    } catch (err) {
      if (err instanceof SnapshotFormatError) throw ApiError.badRequest(`invalid snapshot: ${err.message}; nothing was restored`);
      if (err instanceof TenantNotEmptyError) throw ApiError.conflict(target(name), err.message);
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
