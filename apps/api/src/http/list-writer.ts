import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { inServedOrder, type KubeObject } from '@plinth/apimachinery';
import { presentObject, type ResourceDefinition } from '../registry/resource-definition.js';
import { tableEnvelope, tableRow, toPartialObjectMetadata } from '../table/table-convertor.js';
import { JsonListEncoder } from './json-list-encoder.js';
import { negotiate, type ResponseFormat } from './negotiation.js';
import { encodeBody, includeObjectOf, isPretty, sendEncoded, sendStream } from './response-writer.js';
import { cborServed } from './cbor-serving.js';

/**
 * A list whose encoding grows beyond this many characters is streamed;
 * smaller ones are sent whole with a Content-Length, as before. Equal to the
 * audit log's body cap, so every list answer the audit log can record still
 * reaches it whole.
 */
export const STREAM_THRESHOLD = 1024 * 1024;

/** The socket-side buffer of a streamed list: small, so a slow client stops the reading of further chunks. */
const STREAM_HIGH_WATER_MARK = 64 * 1024;

/** A list body's shape: everything but its array, the array's key (last), and how each object becomes an element. */
interface ListShape {
  envelope: Record<string, unknown>;
  key: 'items' | 'rows';
  element: (obj: KubeObject) => unknown;
}

function listShape(req: FastifyRequest, def: ResourceDefinition, format: ResponseFormat, listMeta: Record<string, unknown>): ListShape {
  if (format.transform === 'table') {
    // One clock for the whole list, however many chunks it is read in.
    const now = new Date();
    const include = includeObjectOf(req);
    return { envelope: tableEnvelope(def, listMeta), key: 'rows', element: (o) => tableRow(def, o, include, now) };
  }
  if (format.transform === 'partial') {
    return { envelope: { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: listMeta }, key: 'items', element: toPartialObjectMetadata };
  }
  const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
  return { envelope: { kind: def.listKind, apiVersion, metadata: listMeta }, key: 'items', element: (o) => o };
}

/**
 * The encoded list in pieces, reading `chunks` only as the pieces are pulled:
 * JSON piece by piece (head, one piece per chunk, tail); YAML, which is
 * encoded whole, as one piece after the last chunk. (CBOR is encoded whole
 * by sendList: a definite-length array needs its count first.)
 */
async function* encodeList(
  shape: ListShape,
  def: ResourceDefinition,
  format: ResponseFormat,
  pretty: boolean,
  chunks: AsyncIterable<KubeObject[]>,
): AsyncGenerator<string, void, undefined> {
  const element = (o: KubeObject) => shape.element(inServedOrder(presentObject(def, o), def.schema) as KubeObject);
  if (format.encoding === 'yaml') {
    yield encodeBody(await wholeList(shape, element, chunks), format, pretty) as string;
    return;
  }
  const encoder = new JsonListEncoder(shape.envelope, shape.key, pretty);
  yield encoder.head();
  for await (const chunk of chunks) {
    const text = encoder.items(chunk.map(element));
    if (text) yield text;
  }
  yield encoder.tail();
}

/** The whole list body, every chunk read. */
async function wholeList(shape: ListShape, element: (o: KubeObject) => unknown, chunks: AsyncIterable<KubeObject[]>): Promise<Record<string, unknown>> {
  const all: unknown[] = [];
  for await (const chunk of chunks) for (const o of chunk) all.push(element(o));
  return { ...shape.envelope, [shape.key]: all };
}

/**
 * `first`'s pieces (emptying it, so they are not held while the rest
 * streams), then `rest`'s; closing it (a client gone) closes `rest`.
 */
async function* prepend(first: string[], rest: AsyncGenerator<string, void, undefined>): AsyncGenerator<string, void, undefined> {
  for (let piece = first.shift(); piece !== undefined; piece = first.shift()) yield piece;
  yield* rest;
}

/**
 * Sends a list, as the list, a Table, or PartialObjectMetadataList per
 * Accept, with `listMeta` as its metadata and the objects of `chunks` (read
 * lazily, in order) as its items. Until the encoding passes STREAM_THRESHOLD
 * nothing is sent, so errors from `chunks` or negotiation reject the returned
 * promise (and become a Status answer); a larger list is streamed, pulling
 * chunks only as fast as the client reads (JSON; YAML and CBOR are encoded whole), and
 * an error after that ends the response abruptly. Byte for byte the answer
 * of encoding the whole list at once.
 */
export async function sendList(
  req: FastifyRequest,
  reply: FastifyReply,
  def: ResourceDefinition,
  listMeta: Record<string, unknown>,
  chunks: AsyncIterable<KubeObject[]>,
): Promise<void> {
  const format = negotiate(req.headers.accept as string | undefined, true, cborServed(req));
  const shape = listShape(req, def, format, listMeta);
  if (format.encoding === 'cbor') {
    // As upstream, a CBOR list is encoded whole (its items array is definite-length).
    const element = (o: KubeObject) => shape.element(inServedOrder(presentObject(def, o), def.schema) as KubeObject);
    return sendEncoded(req, reply, 200, format.contentType, encodeBody(await wholeList(shape, element, chunks), format, false));
  }
  const pieces = encodeList(shape, def, format, isPretty(req), chunks);
  const buffered: string[] = [];
  let size = 0;
  while (size <= STREAM_THRESHOLD) {
    const next = await pieces.next();
    if (next.done) return sendEncoded(req, reply, 200, format.contentType, buffered.join(''));
    buffered.push(next.value);
    size += next.value.length;
  }
  const body = Readable.from(prepend(buffered, pieces), { objectMode: false, highWaterMark: STREAM_HIGH_WATER_MARK });
  sendStream(req, reply, format.contentType, body);
}
