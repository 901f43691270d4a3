import { stringify as yamlStringify } from 'yaml';
import type { CachedChange } from '@plinth/storage';
import type { StatusBody } from '@plinth/apimachinery';
import type { ResponseFormat } from '../http/negotiation.js';
import { CBOR_SELF_DESCRIBED, encodeCbor, type KubeObject } from '@plinth/apimachinery';
import { CBOR_SEQ_MEDIA_TYPE } from '../http/cbor-serving.js';
import { groupVersion, presentObject, type ResourceDefinition } from '../registry/resource-definition.js';
import { inServedOrder } from '@plinth/apimachinery';
import { type IncludeObject, toPartialObjectMetadata, toTable } from '../table/table-convertor.js';

/** The watch event types on the wire. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

const TYPE_SLOT: Record<WatchEventType, number> = { ADDED: 0, MODIFIED: 1, DELETED: 2, BOOKMARK: 3, ERROR: 4 };

/** Marks the BOOKMARK that ends the initial events of a streaming list. */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/**
 * How one watch encodes its events: JSON or YAML framing, and the object
 * as stored, as a Table row or as PartialObjectMetadata. Instances are
 * interned (see {@link watchFormat}), so thousands of watchers share one.
 */
export interface WatchFormat {
  /** Identifies the encoding in memo keys of shared event bytes. */
  readonly key: string;
  readonly encoding: 'json' | 'yaml' | 'cbor';
  readonly transform: 'none' | 'table' | 'partial';
  readonly includeObject: IncludeObject;
  readonly def: ResourceDefinition;
  /** Content-Type of the stream: JSON, YAML documents, or a CBOR sequence (application/cbor-seq, as upstream answers a watch asking for application/cbor). */
  readonly contentType: string;
}

const interned = new WeakMap<ResourceDefinition, Map<string, WatchFormat>>();

/** The (interned) watch format of `def` for a negotiated response format. */
export function watchFormat(def: ResourceDefinition, format: ResponseFormat, includeObject: IncludeObject): WatchFormat {
  const key =
    format.transform === 'table'
      ? `${format.encoding}:table:${includeObject}:${groupVersion(def)}`
      : format.transform === 'partial'
        ? `${format.encoding}:partial:${groupVersion(def)}`
        : `${format.encoding}:none:${groupVersion(def)}`;
  let byKey = interned.get(def);
  if (!byKey) interned.set(def, (byKey = new Map()));
  let f = byKey.get(key);
  if (!f) {
    f = {
      key,
      encoding: format.encoding,
      transform: format.transform,
      includeObject,
      def,
      contentType: format.encoding === 'yaml' ? 'application/yaml;stream=watch' : format.encoding === 'cbor' ? CBOR_SEQ_MEDIA_TYPE : 'application/json',
    };
    byKey.set(key, f);
  }
  return f;
}

/**
 * Wraps `payload` in one HTTP/1.1 chunk (size line, data, CRLF). Events are
 * encoded straight to wire bytes so a memoized event is written to every
 * watcher's socket as the same buffer, with no per-watcher framing work.
 */
function httpChunk(payload: string | Buffer): Buffer {
  const len = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
  const head = `${len.toString(16)}\r\n`;
  const buf = Buffer.allocUnsafe(head.length + len + 2);
  buf.write(head, 0, 'latin1');
  if (typeof payload === 'string') buf.write(payload, head.length, 'utf8');
  else payload.copy(buf, head.length);
  buf.write('\r\n', head.length + len, 'latin1');
  return buf;
}

/** `{"type": …, "object": …}` up to the object: a map of two pairs, keys and type as byte strings (as upstream's WatchEvent). */
const CBOR_EVENT_HEADS = new Map<WatchEventType, Buffer>(
  (['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'] as const).map((type) => {
    const bstr = (s: string) => Buffer.concat([Buffer.from([0x40 + s.length]), Buffer.from(s, 'latin1')]);
    return [type, Buffer.concat([CBOR_SELF_DESCRIBED, Buffer.from([0xa2]), bstr('type'), bstr(type), bstr('object')])];
  }),
);

/**
 * One watch event as one self-described CBOR data item; the object inside
 * carries its own self-described tag, as upstream embeds the object's own
 * CBOR encoding (a RawExtension) in the event.
 */
function cborEvent(type: WatchEventType, body: unknown): Buffer {
  return Buffer.concat([CBOR_EVENT_HEADS.get(type) as Buffer, encodeCbor(body)]);
}

/** The unframed view of each chunk already asked for: one per event bytes, shared by all its watchers. */
const payloads = new WeakMap<Buffer, Buffer>();

/**
 * The event bytes inside an HTTP chunk made by the encoder, for streams
 * that are not chunked (HTTP/2 streams, which the protocol frames, and
 * HTTP/1.0). The view is made once per chunk and kept as long as the chunk
 * is, so a memoized event written to a thousand HTTP/2 watchers makes one
 * view, not one per watcher.
 */
export function chunkPayload(chunk: Buffer): Buffer {
  let payload = payloads.get(chunk);
  if (!payload) payloads.set(chunk, (payload = chunk.subarray(chunk.indexOf(10) + 1, chunk.length - 2)));
  return payload;
}

/** Frames one event as an HTTP chunk holding a JSON line, a YAML document, or a CBOR data item. */
function frame(fmt: WatchFormat, type: WatchEventType, body: unknown): Buffer {
  if (fmt.encoding === 'cbor') return httpChunk(cborEvent(type, body));
  if (fmt.encoding === 'yaml') return httpChunk(`---\n${yamlStringify({ type, object: body }, { lineWidth: 0 })}`);
  return httpChunk(`{"type":"${type}","object":${JSON.stringify(body)}}\n`);
}

/** The object as the watch's format shows it. `withColumns` only matters for Tables (first event). */
function transform(fmt: WatchFormat, stored: KubeObject, withColumns: boolean): unknown {
  // As on reads: the served version's view (CRD conversion, read-time defaults), in served key order.
  const obj = inServedOrder(presentObject(fmt.def, stored), fmt.def.schema) as KubeObject;
  if (fmt.transform === 'table') {
    return toTable(fmt.def, [obj], fmt.includeObject, { resourceVersion: obj.metadata.resourceVersion }, withColumns);
  }
  if (fmt.transform === 'partial') return toPartialObjectMetadata(obj);
  return obj;
}

/** Encodes one object event for one watcher (initial state, change-log catch-up). */
export function encodeEvent(fmt: WatchFormat, type: WatchEventType, obj: KubeObject, withColumns: boolean): Buffer {
  return frame(fmt, type, transform(fmt, obj, withColumns));
}

/**
 * The bytes of a cached change as `type`, showing `obj` (the change's new
 * state, or its previous state for a watcher the object left), memoized on
 * the change so every watcher with the same format writes the same buffer.
 */
export function cachedEventBytes(
  fmt: WatchFormat,
  change: CachedChange,
  type: WatchEventType,
  variant: 'new' | 'old',
  obj: KubeObject,
  withColumns: boolean,
): Buffer {
  // Keyed by the interned format object, then a slot per (type, variant, columns): no string building per watcher.
  const memo = (change.encoded ??= new Map());
  let slots = memo.get(fmt);
  if (!slots) memo.set(fmt, (slots = []));
  const slot = TYPE_SLOT[type] * 4 + (variant === 'old' ? 2 : 0) + (withColumns ? 1 : 0);
  let bytes = slots[slot];
  if (!bytes) slots[slot] = bytes = encodeEvent(fmt, type, obj, withColumns);
  return bytes;
}

/**
 * A BOOKMARK: an object of the watched kind carrying only
 * metadata.resourceVersion (and the initial-events-end annotation when it
 * closes a streaming list's initial events), in the watch's format.
 */
export function bookmarkBytes(fmt: WatchFormat, revision: number, initialEventsEnd: boolean, withColumns: boolean): Buffer {
  const metadata: Record<string, unknown> = { resourceVersion: String(revision) };
  if (initialEventsEnd) metadata.annotations = { [INITIAL_EVENTS_END_ANNOTATION]: 'true' };
  let body: unknown;
  if (fmt.transform === 'table') body = toTable(fmt.def, [], fmt.includeObject, metadata, withColumns);
  else if (fmt.transform === 'partial') body = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata };
  else body = { kind: fmt.def.kind, apiVersion: groupVersion(fmt.def), metadata };
  return frame(fmt, 'BOOKMARK', body);
}

/** An ERROR event carrying a Status, never transformed (as upstream). */
export function errorBytes(fmt: WatchFormat, status: StatusBody): Buffer {
  return frame(fmt, 'ERROR', status);
}
