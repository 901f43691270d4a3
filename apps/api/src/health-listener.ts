import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { healthAnswer } from './health.service.js';
import type { PlinthServices } from './plinth-services.js';

/** The optional plain-HTTP listener: loopback only, GET/HEAD of /healthz, /livez, /readyz, /metrics only. */
export interface HealthListener {
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the plain-HTTP health listener on 127.0.0.1:`port` (0: any free
 * port). Every other path answers 404 and every other method 405; nothing
 * else of the API is reachable through it.
 */
export async function startHealthListener(s: PlinthServices, port: number): Promise<HealthListener> {
  const server = http.createServer((req, res) => {
    const [path, query = ''] = (req.url ?? '/').split('?');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'Content-Type': 'text/plain; charset=utf-8' }).end('method not allowed');
      return;
    }
    healthAnswer(s, path, new URLSearchParams(query).has('verbose')).then(
      (a) => {
        if (!a) res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found');
        else res.writeHead(a.code, { 'Content-Type': a.contentType }).end(req.method === 'HEAD' ? undefined : a.body);
      },
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
