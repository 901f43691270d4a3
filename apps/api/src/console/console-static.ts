import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '@plinth/apimachinery';
import { sendPlain } from '../http/response-writer.js';
import type { ConsoleAsset } from './console-assets.js';
import { cacheControl, CONSOLE_SECURITY_HEADERS } from './console-headers.js';

const PREFIX = /^\/console(\/|$)/;

function send(req: FastifyRequest, reply: FastifyReply, asset: ConsoleAsset, etag: string): FastifyReply {
  for (const [k, v] of Object.entries(CONSOLE_SECURITY_HEADERS)) reply.header(k, v);
  reply.header('cache-control', cacheControl(asset.immutable)).header('etag', etag);
  if (req.headers['if-none-match'] === etag) {
    void reply.code(304).send();
    return reply;
  }
  reply.code(200).header('content-type', asset.contentType);
  void reply.send(req.method === 'HEAD' ? undefined : asset.body);
  return reply;
}

/**
 * Serves the console's static files at `/console/` before authentication
 * (the page and its scripts hold no data; every API call they make carries
 * the user's bearer token and passes RBAC as any client's). Only GET and
 * HEAD of exactly `/console`, `/console/` and the built files are answered
 * here; any other path under /console/ gets index.html (the console routes
 * in the URL hash, so deep links land on the page), other methods a 405
 * Status. Everything else passes on to the API's own chain untouched.
 * Must be registered before the authentication hook (Fastify runs
 * onRequest hooks in registration order).
 */
export function registerConsoleStatic(fastify: FastifyInstance, assets: Map<string, ConsoleAsset>): void {
  const etags = new Map([...assets].map(([p, a]) => [p, `"${createHash('sha256').update(a.body).digest('base64url').slice(0, 27)}"`]));
  fastify.addHook('onRequest', async (req, reply) => {
    const path = req.url.split('?')[0]!;
    if (!PREFIX.test(path)) return undefined;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const err = new ApiError(405, 'MethodNotAllowed', `the console at /console/ is static: ${req.method} is not allowed`);
      reply.header('allow', 'GET, HEAD');
      sendPlain(req, reply, err.code, err.status);
      return reply;
    }
    if (path === '/console') {
      void reply.code(301).header('location', '/console/').send();
      return reply;
    }
    const index = assets.get('/console/index.html');
    if (!index) {
      const err = new ApiError(404, 'NotFound', 'the console was not built: run npm run build');
      sendPlain(req, reply, err.code, err.status);
      return reply;
    }
    const hit = assets.get(path);
    if (hit) return send(req, reply, hit, etags.get(path)!);
    if (path.startsWith('/console/assets/')) {
      const err = new ApiError(404, 'NotFound', `the console has no asset ${path.slice('/console/assets/'.length, 200)}`);
      sendPlain(req, reply, err.code, err.status);
      return reply;
    }
    return send(req, reply, index, etags.get('/console/index.html')!);
  });
}
