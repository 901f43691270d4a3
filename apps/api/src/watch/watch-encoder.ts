import { stringify as yamlStringify } from 'yaml';
import type { CachedChange } from '../../../../libs/storage/src/watch/index.js';
import type { StatusBody } from '../errors/api-error.js';
import type { ResponseFormat } from '../http/negotiation.js';
import type { KubeObject } from '../registry/kube-object.js';
import { groupVersion, type ResourceDefinition } from '../registry/resource-definition.js';
import { type IncludeObject, toPartialObjectMetadata, toTable } from '../table/table-convertor.js';

/** The watch event types on the wire. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

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
  readonly encoding: 'json' | 'yaml';
  readonly transform: 'none' | 'table' | 'partial';
  readonly includeObject: IncludeObject;
  readonly def: ResourceDefinition;
  /** Content-Type of the stream. Table and metadata watches are JSON streams, as upstream. */
  readonly contentType: string;
}

const interned = new WeakMap<ResourceDefinition, Map<string, WatchFormat>>();

/** The (interned) watch format of `def` for a negotiated response format. */
export function watchFormat(def: ResourceDefinition, format: ResponseFormat, includeObject: IncludeObject): WatchFormat {
  const key =
    format.transform === 'table'
      ? `${format.encoding}:table:${includeObject}:${groupVersion(def)}`
      : format.transform === 'partial'
        ? `${format.encoding}:partial`
        : `${format.encoding}:none`;
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
      contentType: format.encoding === 'yaml' ? 'application/yaml;stream=watch' : 'application/json',
    };
    byKey.set(key, f);
  }
  return f;
}

/** Frames one event: a JSON line, or a YAML document. */
function frame(fmt: WatchFormat, type: WatchEventType, body: unknown): Buffer {
  if (fmt.encoding === 'yaml') return Buffer.from(`---\n${yamlStringify({ type, object: body }, { lineWidth: 0 })}`);
  return Buffer.from(`{"type":"${type}","object":${JSON.stringify(body)}}\n`);
}

/** The object as the watch's format shows it. `withColumns` only matters for Tables (first event). */
function transform(fmt: WatchFormat, obj: KubeObject, withColumns: boolean): unknown {
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
  const memoKey = `${fmt.key}|${type}|${variant}|${withColumns ? 1 : 0}`;
  const memo = (change.encoded ??= new Map());
  let bytes = memo.get(memoKey);
  if (!bytes) {
    bytes = encodeEvent(fmt, type, obj, withColumns);
    memo.set(memoKey, bytes);
  }
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
