import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '@plinth/apimachinery';
import { parseRequestInfo } from '../http/request-info.js';
import { sendPlain } from '../http/response-writer.js';
import type { FairQueuing } from './fair-queuing.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Gives the request's seat back (idempotent). Called when the response
     * ends; a watch calls it as soon as its stream has started, since
     * watches count while they start, not while they stay open.
     */
    releaseSeat?: () => void;
  }
}

/** Paths no tenant's queue stands in front of: health, version, metrics (upstream's exempt and probe paths). */
const EXEMPT_PATH = /^\/(healthz|livez|readyz|version|metrics)(\/|$)/;

function refuse(req: FastifyRequest, reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  sendPlain(req, reply, err.code, err.status);
  return reply;
}

/**
 * Installs per-tenant fair queuing after authentication and authorization
 * (so only requests a tenant may make wait in its queues): each request
 * takes a seat of its tenant or waits for one, or gets 429 with
 * Retry-After. `system:masters` (upstream's exempt level) and the health,
 * version and metrics paths never wait.
 */
export function installFlowControl(fastify: FastifyInstance, queuing: FairQueuing): void {
  fastify.addHook('onRequest', async (req, reply) => {
    const user = req.user;
    if (!user || user.groups.includes('system:masters')) return undefined;
    const { tenant, path } = parseRequestInfo(req.method, req.url.split('?')[0], false);
    if (EXEMPT_PATH.test(path)) return undefined;
    let release: () => void;
    try {
      release = await queuing.admit(tenant, user.username);
    } catch (err) {
      if (err instanceof ApiError) return refuse(req, reply, err);
      throw err;
    }
    req.releaseSeat = release;
    // Whatever happens next (an answer, an error, a client that leaves), the seat comes back once.
    reply.raw.once('close', release);
    return undefined;
  });
  fastify.addHook('onResponse', async (req) => req.releaseSeat?.());
}
