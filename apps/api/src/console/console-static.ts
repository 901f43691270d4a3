import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '@plinth/apimachinery';
import { sendPlain } from '../http/response-writer.js';
import type { ConsoleAsset } from './console-assets.js';
import { cacheControl, consoleSecurityHeaders } from './console-headers.js';

const PREFIX = /^\/console(\/|$)/;

function send(req: FastifyRequest, reply: FastifyReply, asset: ConsoleAsset, etag: string, headers: Record<string, string>): FastifyReply {
  for (const [k, v] of Object.entries(headers)) reply.header(k, v);
  const gzip = asset.gzip && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? '')) ? asset.gzip : undefined;
  // Each encoding is its own representation: its own ETag, and caches keyed by Accept-Encoding.
  const tag = gzip ? `${etag.slice(0, -1)}-gzip"` : etag;
  reply.header('cache-control', cacheControl(asset.immutable)).header('etag', tag).header('vary', 'Accept-Encoding');
  if (req.headers['if-none-match'] === tag) {
    void reply.code(304).send();
    return reply;
  }
  reply.code(200).header('content-type', asset.contentType);
  if (gzip) reply.header('content-encoding', 'gzip');
  void reply.send(req.method === 'HEAD' ? undefined : (gzip ?? asset.body));
  return reply;
}

/**
 * Serves the console's files (`assets`: the build and /console/oidc.json) at `/console/` before authentication
 * (the page and its scripts hold no data; every API call they make carries
 * the user's bearer token and passes RBAC as any client's). Only GET and
 * HEAD of exactly `/console`, `/console/` and the built files are answered
 * here; any other path under /console/ gets index.html (the console routes
 * in the URL hash, so deep links land on the page), other methods a 405
 * Status. Every answer carries the security headers with `csp`. Everything else passes on to the API's own chain untouched.
 * Must be registered before the authentication hook (Fastify runs
 * onRequest hooks in registration order).
 */
export function registerConsoleStatic(fastify: FastifyInstance, assets: Map<string, ConsoleAsset>, csp: string): void {
  const headers = consoleSecurityHeaders(csp);
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
    if (hit) return send(req, reply, hit, etags.get(path)!, headers);
    if (path.startsWith('/console/assets/')) {
      const err = new ApiError(404, 'NotFound', `the console has no asset ${path.slice('/console/assets/'.length, 200)}`);
      sendPlain(req, reply, err.code, err.status);
      return reply;
    }
    return send(req, reply, index, etags.get('/console/index.html')!, headers);
  });
}
