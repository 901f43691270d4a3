import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requestAttributes } from '../authn/request-authentication.hook.js';
import { RequestAuthorizer } from '../authz/authorizer-chain.js';
import { type HealthAnswer, HealthService } from './health.service.js';

function send(reply: FastifyReply, a: HealthAnswer): void {
  reply.code(a.code).header('Content-Type', a.contentType).send(a.body);
}

/**
 * /healthz, /livez, /readyz and /metrics. Plain text, as kube-apiserver
 * answers them (see health.service.ts). A check's detail is shown only to a
 * caller RBAC allows `get` on that check's own path (`/readyz/<name>`, as
 * upstream's system:monitoring); everyone else, anonymous included, gets
 * `[+]name ok` / `[-]name failed: reason withheld`.
 */
@Controller()
export class HealthController {
  constructor(
    @Inject(HealthService) private readonly health: HealthService,
    @Inject(RequestAuthorizer) private readonly authorizer: RequestAuthorizer,
  ) {}

  @Get(['healthz', 'livez'])
  live(@Req() req: FastifyRequest, @Query('verbose') verbose: string | undefined, @Res() reply: FastifyReply): void {
    send(reply, this.health.liveness(verbose !== undefined, req.url.startsWith('/healthz') ? 'healthz' : 'livez'));
  }

  @Get('readyz')
  async ready(@Req() req: FastifyRequest, @Query('verbose') verbose: string | undefined, @Res() reply: FastifyReply): Promise<void> {
    const checks = await this.health.readinessChecks();
    const may = await this.detailsFor(req, checks.map((c) => c.name));
    send(reply, this.health.renderReadiness(checks, verbose !== undefined, may));
  }

  @Get('readyz/kms-providers')
  async kms(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    // RBAC has already allowed this path (it is not public-info): the caller may read the check's detail.
    const a = await this.health.readinessCheck('kms-providers', req.user !== undefined);
    send(reply, a ?? { code: 404, contentType: 'text/plain; charset=utf-8', body: 'no such health check: "kms-providers"' });
  }

  @Get('metrics')
  async metrics(@Res() reply: FastifyReply): Promise<void> {
    send(reply, await this.health.metricsText());
  }

  /** Which checks' details the request's user may read: those whose `/readyz/<name>` path RBAC lets them `get` (none for a request without a user). */
  private async detailsFor(req: FastifyRequest, names: string[]): Promise<(check: string) => boolean> {
    const user = req.user;
    if (!user) return () => false;
    const base = requestAttributes(req, user);
    const allowed = new Set<string>();
    for (const name of names) {
      const path = `/readyz/${name}`;
      const d = await Promise.resolve(this.authorizer.authorize({ ...base, verb: 'get', resourceRequest: false, path, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' })).catch(() => ({ allowed: false }));
      if (d.allowed) allowed.add(name);
    }
    return (check) => allowed.has(check);
  }
}
