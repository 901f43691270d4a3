import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '@plinth/apimachinery';
import type { Storage } from '@plinth/storage';
import { sendPlain } from '../http/response-writer.js';
import { PLATFORM_TENANT, TENANCY_BETA_VERSION, TENANCY_GROUP, TENANT_STORAGE_RESOURCE } from '../kinds/tenant/tenant-api.js';
import type { SnapshotTarget } from './snapshot-target.js';

/** Injection token of {@link SnapshotCatalog}. */
export const SNAPSHOT_CATALOG = Symbol('SnapshotCatalog');

/**
 * The snapshots of a tenant in the snapshot target, as the Tenant's
 * `snapshots` subresource answers them (GET, `get` on `tenants/snapshots`):
 * a TenantSnapshotList, newest first, each item a location (what
 * spec.source.snapshot takes), its bytes and time. With no target
 * configured the list is empty and says so.
 */
export class SnapshotCatalog {
  constructor(
    private readonly storage: Pick<Storage, 'get'>,
    readonly target: SnapshotTarget | undefined,
  ) {}

  /** Answers the list of tenant `name`'s snapshots; 404 when there is no such Tenant. */
  async list(req: FastifyRequest, reply: FastifyReply, name: string): Promise<void> {
    const t = await this.storage.get({ tenant: PLATFORM_TENANT, resource: TENANT_STORAGE_RESOURCE, namespace: '', name });
    if (!t) throw ApiError.notFound({ group: TENANCY_GROUP, kind: 'tenants', name });
    const items = this.target ? (await this.target.list(name)).reverse() : [];
    sendPlain(req, reply, 200, {
      kind: 'TenantSnapshotList',
      apiVersion: `${TENANCY_GROUP}/${TENANCY_BETA_VERSION}`,
      metadata: {},
      target: this.target?.description ?? null,
      items: items.map((e) => ({ location: e.location, bytes: e.bytes, time: e.time, scheduled: e.scheduled })),
    });
  }
}
