import { gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { stringify as yamlStringify } from 'yaml';
import type { KubeObject } from '@plinth/apimachinery';
import { inServedOrder } from '@plinth/apimachinery';
import { presentObject, type ResourceDefinition } from '../registry/resource-definition.js';
import { type IncludeObject, toPartialObjectMetadata, toTable } from '../table/table-convertor.js';
import { negotiate, type ResponseFormat } from './negotiation.js';

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

/** Encodes `body` per `format`, pretty-printing when asked. */
export function encodeBody(body: unknown, format: Pick<ResponseFormat, 'encoding'>, pretty: boolean): string {
  if (format.encoding === 'yaml') return yamlStringify(body, { lineWidth: 0 });
  return pretty ? JSON.stringify(body, null, 2) + '\n' : JSON.stringify(body) + '\n';
}

/** Writes an encoded body with gzip when accepted and large. */
export function sendEncoded(req: FastifyRequest, reply: FastifyReply, code: number, contentType: string, text: string): void {
  reply.code(code).header('Content-Type', contentType);
  const ae = String(req.headers['accept-encoding'] ?? '');
  if (text.length > GZIP_THRESHOLD && /\bgzip\b/.test(ae)) {
    reply.header('Content-Encoding', 'gzip').header('Vary', 'Accept-Encoding');
    reply.send(gzipSync(Buffer.from(text)));
    return;
  }
  // A Buffer keeps Fastify from re-serialising the Content-Type (it would quote
  // the parameters and append a charset, which Kubernetes clients do not expect).
  reply.send(Buffer.from(text));
}

function isPretty(req: FastifyRequest): boolean {
  const q = req.query as Record<string, string | undefined>;
  return q.pretty === 'true' || q.pretty === '1';
}

function includeObjectOf(req: FastifyRequest): IncludeObject {
  const v = (req.query as Record<string, string | undefined>).includeObject;
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}

/** Sends one object, as the object, a Table, or PartialObjectMetadata per Accept. */
export function sendObject(req: FastifyRequest, reply: FastifyReply, def: ResourceDefinition, code: number, obj: KubeObject): void {
  const format = negotiate(req.headers.accept as string | undefined);
  obj = inServedOrder(presentObject(def, obj), def.schema) as KubeObject;
  let body: unknown = obj;
  if (format.transform === 'table') body = toTable(def, [obj], includeObjectOf(req), { resourceVersion: obj.metadata.resourceVersion });
  else if (format.transform === 'partial') body = toPartialObjectMetadata(obj);
  sendEncoded(req, reply, code, format.contentType, encodeBody(body, format, isPretty(req)));
}

/** Sends a list, as the list, a Table, or PartialObjectMetadataList per Accept. */
export function sendList(
  req: FastifyRequest,
  reply: FastifyReply,
  def: ResourceDefinition,
  items: KubeObject[],
  listMeta: Record<string, unknown>,
): void {
  const format = negotiate(req.headers.accept as string | undefined);
  items = items.map((i) => inServedOrder(presentObject(def, i), def.schema) as KubeObject);
  let body: unknown;
  if (format.transform === 'table') body = toTable(def, items, includeObjectOf(req), listMeta);
  else if (format.transform === 'partial') {
    body = { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: listMeta, items: items.map(toPartialObjectMetadata) };
  } else {
    const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    body = { kind: def.listKind, apiVersion, metadata: listMeta, items };
  }
  sendEncoded(req, reply, 200, format.contentType, encodeBody(body, format, isPretty(req)));
}

/** Sends a non-object answer (Status, discovery…) as JSON or YAML, never transformed. */
export function sendPlain(req: FastifyRequest, reply: FastifyReply, code: number, body: unknown): void {
  let format: ResponseFormat;
  try {
    format = negotiate(req.headers.accept as string | undefined, false);
  } catch {
    format = { encoding: 'json', transform: 'none', contentType: 'application/json' };
  }
  sendEncoded(req, reply, code, format.contentType, encodeBody(body, format, isPretty(req)));
}
