import type { FastifyInstance, FastifyRequest } from 'fastify';

const SERVED = Symbol('plinth.cborServed');

/**
 * Marks every request of `fastify` as one that may be read and answered in
 * CBOR (application/cbor, application/cbor-seq for watch, apply-patch+cbor)
 * when `enabled`: the CBORServingAndStorage feature gate, alpha and off by
 * default in kube-apiserver 1.35 as here. Kept per request rather than per
 * process, so servers with different settings can share a process (tests).
 */
export function registerCborServing(fastify: FastifyInstance, enabled: boolean): void {
  if (!enabled) return;
  fastify.addHook('onRequest', async (req) => {
    (req as unknown as Record<symbol, boolean>)[SERVED] = true;
  });
}

/** Whether CBOR is served for `req` (see registerCborServing); false for requests of servers without it. */
export function cborServed(req: FastifyRequest | undefined): boolean {
  return req !== undefined && (req as unknown as Record<symbol, boolean | undefined>)[SERVED] === true;
}

/** The CBOR media type (one data item). */
export const CBOR_MEDIA_TYPE = 'application/cbor';

/** The media type of a watch in CBOR: an RFC 8742 sequence of data items, one per event. */
export const CBOR_SEQ_MEDIA_TYPE = 'application/cbor-seq';
