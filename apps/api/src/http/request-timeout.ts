import { constants as h2constants, type Http2ServerRequest } from 'node:http2';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '@plinth/apimachinery';
import { closeGracefully } from './graceful-close.js';
import { parseGoDuration } from '@plinth/apimachinery';
import { firstValues, parseBool, type RawQuery } from './options/query-validation.js';
import { sendPlain } from './response-writer.js';

/** Upstream's message (apierrors.NewTimeoutError) when a request outlives its deadline. */
export const REQUEST_TIMEOUT_MESSAGE = 'Timeout: request did not complete within the allotted timeout';

/** A watch is long-running (upstream also exempts proxy, exec, attach, log and port-forward, which Plinth does not serve), and so is a tenant's snapshot. */
function isLongRunning(req: FastifyRequest, query: Record<string, string | undefined>): boolean {
  if ((req.method === 'GET' || req.method === 'HEAD') && parseBool(query.watch) === true) return true;
  // A tenant's snapshot (export, restore) or restore from history takes as long as the tenant is large (docs/snapshots.md).
  return /^(\/clusters\/[^/]+)?\/((snapshot|restore)|apis\/tenancy\.plinth\.dev\/[^/]+\/tenants\/[^/]+\/(snapshot|restore))$/.test(req.url.split('?')[0]);
}

/**
 * The request's deadline in ms: `defaultMs`, or the client's `?timeout=`
 * when it is shorter and above zero (upstream's WithRequestDeadline).
 * Throws ApiError 400 for a `timeout` Go cannot parse.
 */
function deadlineMs(query: Record<string, string | undefined>, defaultMs: number): number {
  const value = query.timeout;
  if (value === undefined || value === '') return defaultMs;
  let asked: number;
  try {
    asked = parseGoDuration(value);
  } catch (err) {
    throw ApiError.badRequest(`invalid timeout specified in the request URL - ${(err as Error).message}`);
  }
  return asked > 0 && asked < defaultMs ? asked : defaultMs;
}

/** Ends what was started of an answer that cannot be completed: the stream is reset (HTTP/2) or the connection closed (HTTP/1.1). */
function abort(req: FastifyRequest): void {
  const raw = req.raw as unknown as Partial<Http2ServerRequest> & { socket?: Socket };
  if (raw.stream) raw.stream.close(h2constants.NGHTTP2_INTERNAL_ERROR);
  else raw.socket?.destroy();
}

/**
 * Answers 504 for a request whose deadline passed. A request whose body
 * has not all arrived ends its stream (HTTP/2: RST_STREAM NO_ERROR after
 * the answer) or its connection (HTTP/1.1: `Connection: close`, then a
 * graceful close), so a slow sender holds nothing any more.
 */
function expire(req: FastifyRequest, reply: FastifyReply): void {
  if (reply.sent || reply.raw.headersSent) return abort(req);
  const status = new ApiError(504, 'Timeout', REQUEST_TIMEOUT_MESSAGE);
  status.status.details = {};
  const raw = req.raw as unknown as Partial<Http2ServerRequest> & { complete: boolean; socket?: Socket };
  if (!raw.complete) {
    if (raw.stream) {
      const stream = raw.stream;
      // The stream's own 'finish' (the answer is flushed): the compatibility response's waits for the stream to close.
      stream.once('finish', () => stream.close(h2constants.NGHTTP2_NO_ERROR));
    } else if (raw.socket) {
      const socket = raw.socket;
      reply.header('Connection', 'close');
      // Node ends a `Connection: close` response's socket with destroySoon, which closes it with the rest of the
      // body unread (a reset that can lose this answer): close it gracefully instead.
      (socket as Socket & { destroySoon: () => void }).destroySoon = () => closeGracefully(socket);
    }
  }
  sendPlain(req, reply, 504, status.status);
}

/**
 * Registers kube-apiserver's request deadline (its --request-timeout,
 * WithRequestDeadline and WithTimeoutForNonLongRunningRequests): every
 * request but a watch must be answered within `defaultMs` of its arrival
 * (or the shorter `?timeout=` it asks for; an unparsable one is 400),
 * body upload included; past it, the client gets 504 Timeout, or a reset
 * stream or closed connection when its answer had already begun. The
 * handler is not interrupted (as upstream's goroutine is not); what it
 * sends later is dropped.
 */
export function registerRequestTimeout(fastify: FastifyInstance, defaultMs: number): void {
  fastify.addHook('onRequest', async (req, reply) => {
    const query = firstValues((req.query ?? {}) as RawQuery);
    if (isLongRunning(req, query)) return;
    let ms: number;
    try {
      ms = deadlineMs(query, defaultMs);
    } catch (err) {
      const status = (err as ApiError).status;
      sendPlain(req, reply, status.code, status);
      return reply;
    }
    const timer = setTimeout(() => expire(req, reply), ms);
    // 'close': the answer is complete, or the client went away.
    reply.raw.once('close', () => clearTimeout(timer));
  });
}
