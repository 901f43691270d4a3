import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '@plinth/apimachinery';
import { parseRequestInfo } from '../http/request-info.js';
import { sendPlain } from '../http/response-writer.js';
import type { FairQueuing, ReleaseSeats } from './fair-queuing.js';
import type { HoldDone, ThrottledWrites } from './throttled-writes.js';
import type { WorkEstimator } from './work-estimator.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Gives the request's seats back (idempotent) and charges its tenant the
     * work it did. Called when the response ends; a watch calls it as soon
     * as its stream has started, since watches count while they start, not
     * while they stay open.
     */
    releaseSeat?: () => void;
  }
}

type Writable = { write: (...args: unknown[]) => boolean; end: (...args: unknown[]) => unknown };

function sizeOf(chunk: unknown): number {
  if (typeof chunk === 'string') return Buffer.byteLength(chunk);
  if (chunk instanceof Uint8Array) return chunk.byteLength;
  return 0;
}

/**
 * Counts the body bytes written to `res` from now on (HTTP/1.1 and HTTP/2
 * responses alike: Fastify writes bodies, streamed ones too, through
 * `write` and `end`).
 */
function countBytesOut(res: Writable): () => number {
  let n = 0;
  const { write, end } = res;
  res.write = function (this: unknown, chunk: unknown, ...rest: unknown[]) {
    n += sizeOf(chunk);
    return write.call(this, chunk, ...rest);
  };
  res.end = function (this: unknown, chunk: unknown, ...rest: unknown[]) {
    n += sizeOf(chunk);
    return end.call(this, chunk, ...rest);
  };
  return () => n;
}

/** Paths no tenant's queue stands in front of: health, version, metrics (upstream's exempt and probe paths). */
const EXEMPT_PATH = /^\/(healthz|livez|readyz|version|metrics)(\/|$)/;

/** Whether the client of `req` has gone (its HTTP/2 stream or HTTP/1.1 socket is destroyed). */
function clientGone(req: FastifyRequest): boolean {
  const raw = req.raw as unknown as { stream?: { destroyed?: boolean }; socket?: { destroyed?: boolean } | null };
  return Boolean(raw.stream ? raw.stream.destroyed : raw.socket?.destroyed);
}

function refuse(req: FastifyRequest, reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  sendPlain(req, reply, err.code, err.status);
  return reply;
}

/**
 * Installs per-tenant fair queuing after authentication and authorization
 * (so only requests a tenant may make wait in its queues) and before the
 * body is read (so a waiting request costs only its headers): each request
 * takes the seats its estimated work needs ({@link WorkEstimator}: more for
 * large bodies and for tenants whose recent answers were large) or waits
 * for them, or gets 429 with Retry-After. It holds them until its answer is
 * written, then its tenant is charged the work it actually did. A write
 * that its tenant's used-up share of validation time would refuse after
 * reading it is first held, body unread and without a seat, until the
 * share has refilled, or refused when the hold's queue is full or its wait
 * runs out ({@link ThrottledWrites}). A client that leaves while its
 * request waits gives its place up (held) or its seats back (admitted).
 * `system:masters` (upstream's exempt level) and the health, version and
 * metrics paths never wait.
 */
export function installFlowControl(fastify: FastifyInstance, queuing: FairQueuing, estimator: WorkEstimator, throttled: ThrottledWrites): void {
  fastify.addHook('onRequest', async (req, reply) => {
    const user = req.user;
    if (!user || user.groups.includes('system:masters')) return undefined;
    const { tenant, path, group, resource } = parseRequestInfo(req.method, req.url.split('?')[0], false);
    if (EXEMPT_PATH.test(path)) return undefined;
    let held: HoldDone | undefined;
    if (throttled.mustHold(tenant, req.method, group, resource)) {
      let leave: (() => void) | undefined;
      const onClose = () => leave?.();
      const holding = throttled.hold(tenant, (fn) => {
        leave = fn;
        reply.raw.once('close', onClose);
      });
      const outcome = holding instanceof Promise ? await holding : holding;
      reply.raw.off('close', onClose);
      if (typeof outcome !== 'function') {
        queuing.noteRejected(tenant, 'validation-share');
        return refuse(req, reply, outcome.error);
      }
      held = outcome;
    }
    const declared = Number(req.headers['content-length'] ?? 0) || 0;
    let release: ReleaseSeats;
    try {
      release = await queuing.admit(tenant, user.username, estimator.estimate(tenant, req.method, declared));
    } catch (err) {
      held?.();
      if (err instanceof ApiError) return refuse(req, reply, err);
      throw err;
    }
    const bytesOut = countBytesOut(reply.raw as unknown as Writable);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const bytesIn = Buffer.isBuffer(req.body) ? req.body.length : declared;
      release(estimator.observe(tenant, req.method, bytesIn, bytesOut(), req.written?.labels));
      throttled.answered(tenant, req.method, group, resource, reply.statusCode);
      held?.();
    };
    req.releaseSeat = finish;
    // Whatever happens next (an answer, an error, a client that leaves), the seats come back once;
    // a client that left while the request waited for them gives them back now.
    if (clientGone(req)) finish();
    else reply.raw.once('close', finish);
    return undefined;
  });
  fastify.addHook('onResponse', async (req) => req.releaseSeat?.());
}
