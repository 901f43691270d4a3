import { Controller, Get, Inject, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { type HealthAnswer, HealthService } from './health.service.js';

function send(reply: FastifyReply, a: HealthAnswer): void {
  reply.code(a.code).header('Content-Type', a.contentType).send(a.body);
}

/** /healthz, /livez, /readyz and /metrics. Plain text, as kube-apiserver answers them (see health.service.ts). */
@Controller()
export class HealthController {
  constructor(@Inject(HealthService) private readonly health: HealthService) {}

  @Get(['healthz', 'livez'])
  live(@Res() reply: FastifyReply): void {
    send(reply, this.health.liveness());
  }

  @Get('readyz')
  async ready(@Query('verbose') verbose: string | undefined, @Res() reply: FastifyReply): Promise<void> {
    send(reply, await this.health.readiness(verbose !== undefined));
  }

  @Get('readyz/kms-providers')
  async kms(@Res() reply: FastifyReply): Promise<void> {
    send(reply, (await this.health.answer('/readyz/kms-providers'))!);
  }

  @Get('metrics')
  async metrics(@Res() reply: FastifyReply): Promise<void> {
    send(reply, await this.health.metricsText());
  }
}
