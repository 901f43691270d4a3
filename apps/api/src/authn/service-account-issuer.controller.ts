import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '@plinth/apimachinery';
import { AuthenticationService } from './authentication.service.js';
import { TenantCache } from '../kinds/tenant/tenant-cache.js';

/**
 * The ServiceAccount issuer's discovery, per tenant, as upstream serves it:
 * `/.well-known/openid-configuration` and `/openid/v1/jwks` (and both
 * under `/clusters/{tenant}`), so other systems can verify Plinth's tokens.
 */
@Controller()
export class ServiceAccountIssuerController {
  constructor(
    @Inject(AuthenticationService) private readonly authn: AuthenticationService,
    @Inject(TenantCache) private readonly tenantCache: TenantCache,
  ) {}

  @Get(['.well-known/openid-configuration', 'clusters/:tenant/.well-known/openid-configuration'])
  async configuration(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const tenant = await this.tenant(req);
    const base = `https://${req.headers.host ?? req.headers[':authority'] ?? 'localhost'}${tenant === 'default' ? '' : `/clusters/${tenant}`}`;
    reply.header('Content-Type', 'application/json').header('Cache-Control', 'public, max-age=3600');
    reply.send(Buffer.from(JSON.stringify(this.authn.serviceAccountTokens.openidConfiguration(tenant, base))));
  }

  @Get(['openid/v1/jwks', 'clusters/:tenant/openid/v1/jwks'])
  async jwks(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.tenant(req);
    reply.header('Content-Type', 'application/jwk-set+json').header('Cache-Control', 'public, max-age=3600');
    reply.send(Buffer.from(JSON.stringify(this.authn.serviceAccountTokens.jwks())));
  }

  private async tenant(req: FastifyRequest): Promise<string> {
    const tenant = (req.params as { tenant?: string }).tenant ?? 'default';
    if (!(await this.tenantCache.exists(tenant))) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
    return tenant;
  }
}
