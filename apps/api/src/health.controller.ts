import { Controller, Get, Inject, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { type HealthAnswer, liveness, metricsAnswer, readiness } from './health.service.js';
import { PLINTH_SERVICES, type PlinthServices } from './plinth-services.js';

function send(reply: FastifyReply, a: HealthAnswer): void {
  reply.code(a.code).header('Content-Type', a.contentType).send(a.body);
}

/** /healthz, /livez, /readyz and /metrics. Plain text, as kube-apiserver answers them (see health.service.ts). */
@Controller()
export class HealthController {
  constructor(@Inject(PLINTH_SERVICES) private readonly s: PlinthServices) {}

  @Get(['healthz', 'livez'])
  live(@Res() reply: FastifyReply): void {
    send(reply, liveness());
  }

  @Get('readyz')
  async ready(@Query('verbose') verbose: string | undefined, @Res() reply: FastifyReply): Promise<void> {
    send(reply, await readiness(this.s, verbose !== undefined));
  }

  @Get('metrics')
  async metrics(@Res() reply: FastifyReply): Promise<void> {
    send(reply, await metricsAnswer(this.s));
  }
}
