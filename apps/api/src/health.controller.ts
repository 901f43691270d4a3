import { Controller, Get, Header, Inject, Query, Res } from '@nestjs/common';
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

  /**
   * Ready unless this replica cannot serve correctly: PostgreSQL unreachable
   * or the watch pipeline broken. A degraded dependency (Redis down while
   * the PostgreSQL fallback serves watches) keeps it ready and shows as a
   * `[+]… ok (degraded: …)` line under `?verbose`, as kube-apiserver lists
   * its checks.
   */
  @Get('readyz')
  async ready(@Query('verbose') verbose: string | undefined, @Res() reply: FastifyReply): Promise<void> {
    const lines: string[] = [];
    let ok = true;
    if (this.s.shutdown.shuttingDown) {
      ok = false;
      lines.push('[-]shutdown failed: reason withheld');
    }
    if (await probeDatabase(this.s.db)) lines.push('[+]database ok');
    else {
      ok = false;
      lines.push('[-]database failed: PostgreSQL is unreachable');
    }
    const watchProblems = await this.s.watch.readiness().catch((err: Error) => [err.message]);
    if (watchProblems.length > 0) {
      ok = false;
      lines.push(`[-]watch-pipeline failed: ${watchProblems.join('; ')}`);
    } else lines.push('[+]watch-pipeline ok');
    const degraded = this.s.watch.degradations();
    lines.push(degraded.length > 0 ? `[+]watch-fanout ok (degraded: ${degraded.join('; ')})` : '[+]watch-fanout ok');
    const text = ok ? (verbose !== undefined ? `${lines.join('\n')}\nreadyz check passed` : 'ok') : `${lines.filter((l) => l.startsWith('[-]') || verbose !== undefined).join('\n')}\nreadyz check failed`;
    reply.code(ok ? 200 : 503).header('Content-Type', 'text/plain; charset=utf-8').send(text);
  }

  @Get('metrics')
  async metrics(@Res() reply: FastifyReply): Promise<void> {
    reply.header('Content-Type', this.s.metrics.registry.contentType).send(await this.s.metrics.registry.metrics());
  }
}
