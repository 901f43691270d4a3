import { pipeline, type Readable } from 'node:stream';
import { createGzip, gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { stringify as yamlStringify } from 'yaml';
import { encodeCbor, type KubeObject } from '@plinth/apimachinery';
import { inServedOrder } from '@plinth/apimachinery';
import { presentObject, type ResourceDefinition } from '../registry/resource-definition.js';
import { type IncludeObject, toPartialObjectMetadata, toTable } from '../table/table-convertor.js';
import { negotiate, type ResponseFormat } from './negotiation.js';
import { cborServed } from './cbor-serving.js';
import { noteWrittenObject } from './written-object.js';

const GZIP_THRESHOLD = 128 * 1024;

/** Escapes a warning text for a `Warning: 299 - "…"` header value. */
function warningHeader(text: string): string {
  return `299 - ${JSON.stringify(text.replace(/[\r\n]+/g, ' '))}`;
}

/** Sets one deduplicated Warning header per text. */
export function setWarnings(reply: FastifyReply, warnings: string[]): void {
  if (warnings.length === 0) return;
  reply.header('Warning', [...new Set(warnings)].map(warningHeader));
}

/** Encodes `body` per `format`, pretty-printing text when asked; CBOR as one self-described data item. */
export function encodeBody(body: unknown, format: Pick<ResponseFormat, 'encoding'>, pretty: boolean): string | Buffer {
  if (format.encoding === 'cbor') return encodeCbor(body);
  if (format.encoding === 'yaml') return yamlStringify(body, { lineWidth: 0 });
  return pretty ? JSON.stringify(body, null, 2) + '\n' : JSON.stringify(body) + '\n';
}

function acceptsGzip(req: FastifyRequest): boolean {
  return /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
}

/** Writes an encoded body with gzip when accepted and large. */
export function sendEncoded(req: FastifyRequest, reply: FastifyReply, code: number, contentType: string, text: string | Buffer): void {
  reply.code(code).header('Content-Type', contentType);
  // A Buffer keeps Fastify from re-serialising the Content-Type (it would quote
  // the parameters and append a charset, which Kubernetes clients do not expect).
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  if (text.length > GZIP_THRESHOLD && acceptsGzip(req)) {
    reply.header('Content-Encoding', 'gzip').header('Vary', 'Accept-Encoding');
    reply.send(gzipSync(bytes));
    return;
  }
  reply.send(bytes);
}

/**
 * Streams a 200 body of unknown length (chunked on HTTP/1.1), gzipped when
 * accepted: callers stream only bodies already known to be larger than the
 * gzip threshold. Fastify pipes `body` with backpressure; an error of `body`
 * after the first byte ends the response abruptly (Fastify logs it and
 * destroys the response), as upstream ends a list it cannot finish.
 */
export function sendStream(req: FastifyRequest, reply: FastifyReply, contentType: string, body: Readable): void {
  reply.code(200).header('Content-Type', contentType);
  if (!acceptsGzip(req)) {
    reply.send(body);
    return;
  }
  reply.header('Content-Encoding', 'gzip').header('Vary', 'Accept-Encoding');
  // pipeline destroys the gzip stream with the source's error, which Fastify then sees.
  reply.send(pipeline(body, createGzip(), () => undefined));
}

/** Whether the request asks for pretty-printed output (`pretty=true` or `1`). */
export function isPretty(req: FastifyRequest): boolean {
  const q = req.query as Record<string, string | undefined>;
  return q.pretty === 'true' || q.pretty === '1';
}

/** The request's `includeObject` for Tables (default Metadata). */
export function includeObjectOf(req: FastifyRequest): IncludeObject {
  const v = (req.query as Record<string, string | undefined>).includeObject;
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}

/** Sends one object, as the object, a Table, or PartialObjectMetadata per Accept. */
export function sendObject(req: FastifyRequest, reply: FastifyReply, def: ResourceDefinition, code: number, obj: KubeObject): void {
  noteWrittenObject(req, obj);
  const format = negotiate(req.headers.accept as string | undefined, true, cborServed(req));
  obj = inServedOrder(presentObject(def, obj), def.schema) as KubeObject;
  let body: unknown = obj;
  if (format.transform === 'table') body = toTable(def, [obj], includeObjectOf(req), { resourceVersion: obj.metadata.resourceVersion });
  else if (format.transform === 'partial') body = toPartialObjectMetadata(obj);
  sendEncoded(req, reply, code, format.contentType, encodeBody(body, format, isPretty(req)));
}

/** Sends a non-object answer (Status, discovery…) as JSON, YAML or CBOR, never transformed. */
export function sendPlain(req: FastifyRequest, reply: FastifyReply, code: number, body: unknown): void {
  let format: ResponseFormat;
  try {
    format = negotiate(req.headers.accept as string | undefined, false, cborServed(req));
  } catch {
    format = { encoding: 'json', transform: 'none', contentType: 'application/json' };
  }
  sendEncoded(req, reply, code, format.contentType, encodeBody(body, format, isPretty(req)));
}
