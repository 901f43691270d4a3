import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { PostStartHooks } from '../lifecycle/post-start-hooks.js';
import { HealthService } from './health.service.js';

/**
 * The optional plain-HTTP health listener (PLINTH_HEALTH_PORT): loopback
 * only, GET/HEAD of /healthz, /livez, /readyz, /metrics only; every other
 * path answers 404 and every other method 405, so nothing else of the API
 * is reachable through it. Started by a post-start hook, closed at shutdown.
 */
@Injectable()
export class HealthListener implements OnApplicationShutdown {
  private server: http.Server | undefined;
  /** `http://127.0.0.1:port` once listening. */
  url: string | undefined;

  constructor(
    @Inject(HealthService) private readonly health: HealthService,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(PostStartHooks) postStart: PostStartHooks,
  ) {
    const port = config.healthPort;
    if (port !== undefined) postStart.add('health/plain-listener', () => this.listen(port));
  }

  /** Listens on 127.0.0.1:`port` (0: any free port). */
  async listen(port: number): Promise<void> {
    const server = http.createServer((req, res) => this.serve(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise((resolve) => server.close(() => resolve(undefined)));
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const [path, query = ''] = (req.url ?? '/').split('?');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'Content-Type': 'text/plain; charset=utf-8' }).end('method not allowed');
      return;
    }
    this.health.answer(path, new URLSearchParams(query).has('verbose')).then(
      (a) => {
        if (!a) res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found');
        else res.writeHead(a.code, { 'Content-Type': a.contentType }).end(req.method === 'HEAD' ? undefined : a.body);
      },
      () => res.writeHead(500).end(),
    );
  }
}
