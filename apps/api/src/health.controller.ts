import { Controller, Get, Header, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { probeDatabase } from '@plinth/storage';
import { PLINTH_SERVICES, type PlinthServices } from './plinth-services.js';

/** /healthz, /livez, /readyz and /metrics. Plain text, as kube-apiserver answers them. */
@Controller()
export class HealthController {
  constructor(@Inject(PLINTH_SERVICES) private readonly s: PlinthServices) {}

  @Get(['healthz', 'livez'])
  @Header('Content-Type', 'text/plain; charset=utf-8')
  live(): string {
    return 'ok';
  }

  @Get('readyz')
  async ready(@Res() reply: FastifyReply): Promise<void> {
    const failed: string[] = [];
    if (!(await probeDatabase(this.s.db))) failed.push('[-]database failed: PostgreSQL is unreachable');
    const watchProblems = await this.s.watch.readiness().catch((err: Error) => [err.message]);
    if (watchProblems.length > 0) failed.push(`[-]watch-pipeline failed: ${watchProblems.join('; ')}`);
    const ok = failed.length === 0;
    reply
      .code(ok ? 200 : 503)
      .header('Content-Type', 'text/plain; charset=utf-8')
      .send(ok ? 'ok' : `${failed.join('\n')}\nreadyz check failed`);
  }

  @Get('metrics')
  async metrics(@Res() reply: FastifyReply): Promise<void> {
    reply.header('Content-Type', this.s.metrics.registry.contentType).send(await this.s.metrics.registry.metrics());
  }
}
