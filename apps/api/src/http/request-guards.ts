import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '@plinth/apimachinery';
import { closeGracefully, isClosing } from './graceful-close.js';
import { sendPlain } from './response-writer.js';

/**
 * Answers for requests that never reach a handler, as Kubernetes `Status`
 * objects instead of Fastify's own JSON: malformed HTTP that Node's parser
 * refuses (431 for over-long headers, 400 otherwise), URLs Fastify cannot
 * decode (bad percent-encoding), and a NUL anywhere in the path or query
 * (no name, selector or token can hold one, and PostgreSQL text cannot).
 */

function statusJson(err: ApiError): string {
  return JSON.stringify(err.status);
}

/**
 * Fastify's `clientErrorHandler`: writes a Status on the raw socket for a
 * request Node's HTTP parser rejected, then closes it gracefully (the
 * peer reads the answer even while it is still sending its request).
 */
export function clientErrorStatus(err: NodeJS.ErrnoException, socket: Socket): void {
  // Node's parser reports each further chunk of a refused request again: the answer is on its way.
  if (socket.destroyed || isClosing(socket)) return;
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge
    ? new ApiError(431, 'RequestHeaderFieldsTooLarge', 'Request Header Fields Too Large: the request headers exceed the allowed size')
    : ApiError.badRequest(`malformed HTTP request: ${err.code ?? 'parse error'}`);
  const body = statusJson(status);
  socket.write(
    `HTTP/1.1 ${status.code} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  // The rest of the request is still arriving: answer, then close without a reset that would lose the answer.
  closeGracefully(socket);
}

/** Fastify's `frameworkErrors`: a URL it cannot decode, or another request-level error, as a 400 Status. */
export function frameworkErrorStatus(err: Error & { code?: string }, req: FastifyRequest, reply: FastifyReply): void {
  const status = err.code === 'FST_ERR_BAD_URL' ? ApiError.badRequest(`the request URL is not valid: ${req.url.slice(0, 200)}`) : ApiError.badRequest(err.message);
  // Plain JSON: the request's query could not be parsed, so no content negotiation.
  void reply.code(status.code).type('application/json').send(statusJson(status));
}

/** Registers the NUL guard: 400 BadRequest for `%00` anywhere in the URL, before any handler runs. */
export function registerRequestGuards(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', async (req, reply) => {
    if (!/%00/.test(req.url)) return;
    const status = ApiError.badRequest('the request URL contains a NUL character (%00), which no name, selector or token may hold');
    sendPlain(req, reply, status.code, status.status);
    return reply;
  });
}
