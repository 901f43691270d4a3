import { Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '@plinth/apimachinery';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { TenantCache } from '../kinds/tenant/tenant-cache.js';
import { sendGroup, sendOpenApiV2, sendOpenApiV3, sendResourceList, sendRootDiscovery, sendVersion } from './discovery-answers.js';
import { DiscoveryService } from './discovery.service.js';
import { OpenApiDocumentsService } from './openapi-documents.service.js';

/** Both forms of a path: the platform scope's and a tenant's (`/clusters/{tenant}/...`). */
const scoped = (path: string): string[] => [path, `clusters/:tenant/${path}`];

/**
 * The paths that name no resource, as routes of their own: /version,
 * discovery (/api, /api/{v}, /apis, /apis/{g}, /apis/{g}/{v}, legacy or
 * aggregated per Accept) and OpenAPI (/openapi/v2, /openapi/v3[/...]), each
 * also under /clusters/{tenant}. Other methods on these paths reach the
 * resource controller, which answers 405.
 */
@Controller()
export class DiscoveryController {
  constructor(
    @Inject(TenantCache) private readonly tenants: TenantCache,
    @Inject(ResourceRegistry) private readonly registry: ResourceRegistry,
    @Inject(DiscoveryService) private readonly discovery: DiscoveryService,
    @Inject(OpenApiDocumentsService) private readonly openapi: OpenApiDocumentsService,
  ) {}

  @Get(scoped('version'))
  async version(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.tenant(req);
    sendVersion(req, reply);
  }

  @Get(scoped('api'))
  async core(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    sendRootDiscovery(req, reply, this.discovery, await this.tenant(req), true);
  }

  @Get(scoped('apis'))
  async groups(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    sendRootDiscovery(req, reply, this.discovery, await this.tenant(req), false);
  }

  @Get(scoped('api/:version'))
  async coreVersion(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('version') version: string): Promise<void> {
    sendResourceList(req, reply, this.discovery, await this.tenant(req), '', version);
  }

  @Get(scoped('apis/:group'))
  async group(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('group') group: string): Promise<void> {
    sendGroup(req, reply, this.discovery, await this.tenant(req), group);
  }

  @Get(scoped('apis/:group/:version'))
  async groupVersion(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('group') group: string, @Param('version') version: string): Promise<void> {
    sendResourceList(req, reply, this.discovery, await this.tenant(req), group, version);
  }

  @Get(scoped('openapi/v2'))
  async openApiV2(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    sendOpenApiV2(req, reply, this.openapi, await this.tenant(req));
  }

  @Get([...scoped('openapi/v3'), ...scoped('openapi/v3/*')])
  async openApiV3(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('*') rest: string | undefined): Promise<void> {
    sendOpenApiV3(req, reply, this.openapi, await this.tenant(req), rest ?? '');
  }

  /** The request's tenant, its served resources loaded; 404 when it does not exist. */
  private async tenant(req: FastifyRequest): Promise<string> {
    req.plinth = { verb: 'get', group: '', resource: '' };
    const tenant = (req.params as { tenant?: string }).tenant ?? 'default';
    if (!(await this.tenants.get(tenant))) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
    await this.registry.prepare(tenant);
    return tenant;
  }
}
