import { Controller, Get, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '@plinth/apimachinery';
import { TenantCache } from '../kinds/tenant/tenant-cache.js';
import { TENANT_SNAPSHOTS, type TenantSnapshotService } from './tenant-snapshot.service.js';

/**
 * `GET /clusters/{tenant}/snapshot`: a tenant's own members export it, as a
 * non-resource path of their logical cluster (RBAC: `nonResourceURLs:
 * ["/snapshot"], verbs: ["get"]`; a tenant's owners, cluster-admin there,
 * may). The same query and answer as the Tenant's `snapshot` subresource;
 * `POST /clusters/{tenant}/snapshot` restores a snapshot of the tenant
 * itself; and `POST /clusters/{tenant}/restore`, as the Tenant's `restore`.
 */
@Controller()
export class TenantSnapshotController {
  constructor(
    @Inject(TenantCache) private readonly tenants: TenantCache,
    @Inject(TENANT_SNAPSHOTS) private readonly snapshots: TenantSnapshotService,
  ) {}

  @Get('clusters/:tenant/snapshot')
  async export(@Param('tenant') tenant: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    if (!(await this.tenants.get(tenant))) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
    const q = (req.query ?? {}) as Record<string, string | string[] | undefined>;
    const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
    const all = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
    await this.snapshots.export(req, reply, tenant, { resourceVersion: first(q.resourceVersion), at: first(q.at), recipients: all(q.recipient) });
  }

  /**
   * `POST /clusters/{tenant}/snapshot`: a tenant's own members restore a
   * snapshot of their own tenant into it (RBAC: `nonResourceURLs:
   * ["/snapshot"], verbs: ["post"]`; its owners may), `replace=true` to
   * replace what it holds; a snapshot of another tenant is refused (403).
   */
  @Post('clusters/:tenant/snapshot')
  async restoreSnapshot(@Param('tenant') tenant: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    if (!(await this.tenants.get(tenant))) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
    const q = (req.query ?? {}) as Record<string, string | string[] | undefined>;
    const replace = (Array.isArray(q.replace) ? q.replace[0] : q.replace) === 'true';
    await this.snapshots.restore(req, reply, tenant, Buffer.isBuffer(req.body) ? req.body : undefined, replace, { ownTenantOnly: true });
  }

  /** `POST /clusters/{tenant}/restore`: brings named namespaces and objects back from history (RBAC: `nonResourceURLs: ["/restore"], verbs: ["post"]`). */
  @Post('clusters/:tenant/restore')
  async restore(@Param('tenant') tenant: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    if (!(await this.tenants.get(tenant))) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
    await this.snapshots.restoreHistory(req, reply, tenant, Buffer.isBuffer(req.body) ? req.body : undefined);
  }
}
