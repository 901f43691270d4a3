import type { Http2ServerRequest } from 'node:http2';
import type { FastifyInstance } from 'fastify';

/**
 * Registers the hook that makes Fastify read HTTP/2 bodies of unknown
 * length. Fastify decides whether a request without Content-Type has a
 * body from Content-Length and Transfer-Encoding alone (HTTP/1.1's rule);
 * HTTP/2 signals a body by a HEADERS frame without END_STREAM and forbids
 * Transfer-Encoding, so Go clients streaming a body (kubectl create --raw
 * -f, which sends neither Content-Type nor Content-Length) had their body
 * dropped. Such a request is marked as chunked, which is what it is: the
 * body is then read (up to the body limit) and decoded as JSON, the
 * media type kube-apiserver assumes when none is given. Mutates the
 * request's headers; requests whose stream ended with its headers are
 * left alone (they have no body).
 */
export function registerStreamedBodies(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', async (req) => {
    if (req.raw.httpVersionMajor !== 2) return;
    const headers = req.raw.headers;
    if (headers['content-type'] !== undefined || headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return;
    if ((req.raw as unknown as Http2ServerRequest).stream?.endAfterHeaders !== false) return;
    headers['transfer-encoding'] = 'chunked';
  });
}
