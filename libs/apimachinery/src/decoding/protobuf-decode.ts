import { Buffer } from 'node:buffer';
import type protobuf from 'protobufjs';
import { DecodeError, goQuote } from './decode-error.js';
import { FIELDS_V1_MESSAGE, QUANTITY_MESSAGE, TIME_MESSAGE, UNKNOWN_MESSAGE, k8sProtoRoot, protobufMessageFor } from './k8s-proto.descriptor.js';

/** The group/version/kind upstream falls back to for parts missing from the body's typeMeta. */
export interface ExpectedKind {
  apiVersion: string;
  kind: string;
}

const MAGIC = [0x6b, 0x38, 0x73, 0x00];
const SCHEME = 'k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30';
const ZERO_TIME_SECONDS = -62135596800n;

/**
 * Decodes a `application/vnd.kubernetes.protobuf` request body (magic `k8s\0` + runtime.Unknown
 * envelope) into the object's JSON form as kube-apiserver's JSON encoder would write it: kind and
 * apiVersion first, then the fields in Go struct order, with Go's omitempty/omitzero/pointer rules
 * (so `spec: {}` stays, absent pointers are dropped), Time as RFC 3339 seconds, bytes as base64, map
 * keys sorted, FieldsV1 as parsed JSON and int64 as the nearest number. Parts of apiVersion/kind
 * missing from the envelope are taken from `expected`, as upstream defaults them from the target type.
 * Pure; returns a fresh object. Throws only DecodeError, in upstream wording: envelope problems
 * (`empty data`, `provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]`,
 * `empty body`, wire errors such as `unexpected EOF`, missing kind) with beforeKind true; a missing
 * version, a kind Plinth cannot decode (`no kind "X" is registered for version "v" in scheme …`) and
 * errors inside the object's own message with beforeKind false.
 */
export function decodeKubernetesProtobuf(body: Uint8Array, expected?: ExpectedKind): Record<string, unknown> {
  try {
    return decodeBody(body, expected);
  } catch (err) {
    if (err instanceof DecodeError) throw err;
    throw new DecodeError(`failed to decode protobuf: ${err instanceof Error ? err.message : String(err)}`, { beforeKind: false });
  }
}

function decodeBody(body: Uint8Array, expected: ExpectedKind | undefined): Record<string, unknown> {
  if (body.length === 0) throw new DecodeError('empty data');
  if (body.length < MAGIC.length || MAGIC.some((b, i) => body[i] !== b)) {
    throw new DecodeError(`provided data does not appear to be a protobuf message, expected prefix [${MAGIC.join(' ')}]`);
  }
  if (body.length === MAGIC.length) throw new DecodeError('empty body');
  const root = k8sProtoRoot();
  const envelope = wireGuard(true, () => decodeMessage(root.lookupType(UNKNOWN_MESSAGE), body, MAGIC.length, body.length));
  const typeMeta = envelope.values.get('typeMeta') as DecodedMessage | undefined;
  const sentApiVersion = (typeMeta?.values.get('apiVersion') as string | undefined) ?? '';
  const sentKind = (typeMeta?.values.get('kind') as string | undefined) ?? '';
  const gvk = withDefaults({ ...parseGroupVersion(sentApiVersion), kind: sentKind }, expected);
  const sent = `runtime.TypeMeta{APIVersion:${goQuote(sentApiVersion)}, Kind:${goQuote(sentKind)}}`;
  if (gvk.kind === '') throw new DecodeError(`Object 'Kind' is missing in '${sent}'`);
  if (gvk.version === '') throw new DecodeError(`Object 'apiVersion' is missing in '${sent}'`, { beforeKind: false });
  const apiVersion = gvk.group === '' ? gvk.version : `${gvk.group}/${gvk.version}`;
  const messageName = protobufMessageFor(apiVersion, gvk.kind);
  if (messageName === undefined) {
    throw new DecodeError(`no kind ${goQuote(gvk.kind)} is registered for version ${goQuote(apiVersion)} in scheme ${goQuote(SCHEME)}`, { beforeKind: false });
  }
  const raw = (envelope.values.get('raw') as Uint8Array | undefined) ?? new Uint8Array();
  const object = wireGuard(false, () => decodeMessage(root.lookupType(messageName), raw, 0, raw.length));
  return { kind: gvk.kind, apiVersion, ...messageToJson(object) };
}

type GroupVersionKind = { group: string; version: string; kind: string };

/** schema.ParseGroupVersion, with its error case (more than one slash) yielding the empty version. */
function parseGroupVersion(apiVersion: string): { group: string; version: string } {
  const parts = apiVersion.split('/');
  if (apiVersion === '' || apiVersion === '/' || parts.length > 2) return { group: '', version: '' };
  return parts.length === 1 ? { group: '', version: parts[0] } : { group: parts[0], version: parts[1] };
}

/** Upstream's copyKindDefaults: an empty kind or version is taken from the expected type. */
function withDefaults(gvk: GroupVersionKind, expected: ExpectedKind | undefined): GroupVersionKind {
  if (!expected) return gvk;
  const fallback = parseGroupVersion(expected.apiVersion);
  const kind = gvk.kind === '' ? expected.kind : gvk.kind;
  return gvk.version === '' && fallback.version !== '' ? { ...fallback, kind } : { ...gvk, kind };
}

// ---- wire decoding (errors worded as gogo-protobuf's generated Unmarshal methods word them) ----

/** A malformed wire encoding; converted to DecodeError by wireGuard. */
class WireError extends Error {}

const UNEXPECTED_EOF = 'unexpected EOF';
const INT_OVERFLOW = 'proto: integer overflow';
const NEGATIVE_LENGTH = 'proto: negative length found during unmarshaling';

function wireGuard<T>(beforeKind: boolean, run: () => T): T {
  try {
    return run();
  } catch (err) {
    if (err instanceof WireError) throw new DecodeError(err.message, { beforeKind });
    throw err;
  }
}

type Scalar = string | number | boolean | Uint8Array;
type Decoded = Scalar | DecodedMessage | Decoded[] | Map<string, Scalar>;

/** A decoded message: values by proto field name (presence = has), plus its encoded size. */
interface DecodedMessage {
  type: protobuf.Type;
  values: Map<string, Decoded>;
  byteLength: number;
}

const utf8 = new TextDecoder('utf-8');

class WireReader {
  constructor(
    readonly buf: Uint8Array,
    public pos: number,
    readonly end: number,
  ) {}

  varint(): bigint {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (shift >= 64n) throw new WireError(INT_OVERFLOW);
      if (this.pos >= this.end) throw new WireError(UNEXPECTED_EOF);
      const b = this.buf[this.pos++];
      value |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return BigInt.asUintN(64, value);
    }
  }

  /** A length-delimited payload's [start, end), checked against the enclosing message's end. */
  span(): [number, number] {
    const length = BigInt.asIntN(64, this.varint());
    if (length < 0n) throw new WireError(NEGATIVE_LENGTH);
    if (BigInt(this.pos) + length > BigInt(this.end)) throw new WireError(UNEXPECTED_EOF);
    const start = this.pos;
    this.pos += Number(length);
    return [start, this.pos];
  }

  /** Skips the field whose tag starts at `tagStart`, as skipGenerated does (groups included). */
  skipField(tagStart: number): void {
    this.pos = tagStart;
    let depth = 0;
    while (this.pos < this.end) {
      const wireType = Number(this.varint() & 7n);
      if (wireType === 0) this.varint();
      else if (wireType === 1) this.advance(8);
      else if (wireType === 2) this.span();
      else if (wireType === 3) depth++;
      else if (wireType === 4) {
        if (depth === 0) throw new WireError('proto: unexpected end of group');
        depth--;
      } else if (wireType === 5) this.advance(4);
      else throw new WireError(`proto: illegal wireType ${wireType}`);
      if (depth === 0) return;
    }
    throw new WireError(UNEXPECTED_EOF);
  }

  private advance(n: number): void {
    if (this.pos + n > this.end) throw new WireError(UNEXPECTED_EOF);
    this.pos += n;
  }
}

/** Decodes buf[start, end) as `type`, merging into `into` as gogo's Unmarshal merges repeated occurrences. */
function decodeMessage(type: protobuf.Type, buf: Uint8Array, start: number, end: number, into?: DecodedMessage): DecodedMessage {
  const msg = into ?? { type, values: new Map<string, Decoded>(), byteLength: 0 };
  msg.byteLength += end - start;
  const reader = new WireReader(buf, start, end);
  while (reader.pos < end) {
    const tagStart = reader.pos;
    const tag = reader.varint();
    const fieldNum = Number(BigInt.asIntN(32, tag >> 3n));
    const wireType = Number(tag & 7n);
    if (wireType === 4) throw new WireError(`proto: ${type.name}: wiretype end group for non-group`);
    if (fieldNum <= 0) throw new WireError(`proto: ${type.name}: illegal tag ${fieldNum} (wire type ${tag})`);
    const field = type.fieldsById[fieldNum];
    if (!field) {
      reader.skipField(tagStart);
      continue;
    }
    const expectedWire = field.map || field.repeated || field.resolvedType || field.type === 'string' || field.type === 'bytes' ? 2 : 0;
    if (wireType !== expectedWire) throw new WireError(`proto: wrong wireType = ${wireType} for field ${goFieldName(field)}`);
    decodeField(field, reader, msg.values);
  }
  return msg;
}

function decodeField(field: protobuf.Field, reader: WireReader, values: Map<string, Decoded>): void {
  if (field.map) {
    const entries = (values.get(field.name) as Map<string, Scalar> | undefined) ?? new Map<string, Scalar>();
    const [key, value] = decodeMapEntry(field, reader);
    entries.set(key, value);
    values.set(field.name, entries);
  } else if (field.resolvedType) {
    const [start, end] = reader.span();
    const type = field.resolvedType as protobuf.Type;
    if (field.repeated) {
      const list = (values.get(field.name) as Decoded[] | undefined) ?? [];
      list.push(decodeMessage(type, reader.buf, start, end));
      values.set(field.name, list);
    } else {
      // A repeated occurrence merges into the value as gogo's Unmarshal does, except Time, which it replaces.
      const previous = type.fullName.slice(1) === TIME_MESSAGE ? undefined : (values.get(field.name) as DecodedMessage | undefined);
      values.set(field.name, decodeMessage(type, reader.buf, start, end, previous));
    }
  } else if (field.repeated) {
    const list = (values.get(field.name) as Decoded[] | undefined) ?? [];
    list.push(decodeScalar(field.type, reader));
    values.set(field.name, list);
  } else {
    values.set(field.name, decodeScalar(field.type, reader));
  }
}

function decodeScalar(type: string, reader: WireReader): Scalar {
  switch (type) {
    case 'string': {
      const [start, end] = reader.span();
      return utf8.decode(reader.buf.subarray(start, end));
    }
    case 'bytes': {
      const [start, end] = reader.span();
      return reader.buf.slice(start, end);
    }
    case 'int64':
      return Number(BigInt.asIntN(64, reader.varint()));
    case 'int32':
      return Number(BigInt.asIntN(32, reader.varint()));
    case 'bool':
      return reader.varint() !== 0n;
    default:
      throw new Error(`protobuf transcription uses unsupported scalar type ${type}`);
  }
}

/** One map entry {key = 1, value = 2}; a missing key or value is the empty string/bytes, as in gogo. */
function decodeMapEntry(field: protobuf.Field, outer: WireReader): [string, Scalar] {
  const [start, end] = outer.span();
  const reader = new WireReader(outer.buf, start, end);
  let key = '';
  let value: Scalar = field.type === 'bytes' ? new Uint8Array() : '';
  while (reader.pos < end) {
    const tagStart = reader.pos;
    const tag = reader.varint();
    const fieldNum = tag >> 3n;
    if (fieldNum === 1n || fieldNum === 2n) {
      if ((tag & 7n) !== 2n) throw new WireError(`proto: wrong wireType = ${tag & 7n} for field ${goFieldName(field)}`);
      if (fieldNum === 1n) key = decodeScalar('string', reader) as string;
      else if (field.resolvedType) {
        // A message value (resource.Quantity in ResourceLists) becomes its JSON form here.
        const [s, e] = reader.span();
        value = messageValueToJson(decodeMessage(field.resolvedType as protobuf.Type, reader.buf, s, e)) as Scalar;
      } else value = decodeScalar(field.type, reader);
    } else {
      reader.skipField(tagStart);
    }
  }
  return [key, value];
}

function goFieldName(field: protobuf.Field): string {
  const override = field.getOption('(go)') as string | undefined;
  return override ?? field.name.charAt(0).toUpperCase() + field.name.slice(1);
}

// ---- JSON conversion (Go encoding/json over the k8s.io/api struct) ----

/** A field's Go JSON facts, from its (json)/(ptr) options. */
interface JsonRule {
  name: string;
  omitempty: boolean;
  omitzero: boolean;
  inline: boolean;
  pointer: boolean;
}

const OMIT = Symbol('omit');
const rules = new WeakMap<protobuf.Field, JsonRule>();

function jsonRule(field: protobuf.Field): JsonRule {
  const cached = rules.get(field);
  if (cached) return cached;
  const tag = field.getOption('(json)') as string | undefined;
  if (typeof tag !== 'string') throw new Error(`protobuf transcription: field ${field.fullName} lacks a (json) option`);
  const [name, ...flags] = tag.split(',');
  const rule: JsonRule = {
    name,
    omitempty: flags.includes('omitempty'),
    omitzero: flags.includes('omitzero'),
    inline: flags.includes('inline'),
    pointer: field.getOption('(ptr)') === true,
  };
  rules.set(field, rule);
  return rule;
}

function messageToJson(msg: DecodedMessage): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of msg.type.fieldsArray) {
    const rule = jsonRule(field);
    if (rule.name === '-') continue;
    const value = fieldToJson(field, rule, msg.values.get(field.name));
    if (value === OMIT) continue;
    if (rule.inline) Object.assign(out, value);
    else setOwn(out, rule.name, value);
  }
  return out;
}

function fieldToJson(field: protobuf.Field, rule: JsonRule, value: Decoded | undefined): unknown {
  if (field.map) {
    // A map or slice never seen on the wire stays nil in Go: null, or dropped under omitempty.
    const entries = value as Map<string, Scalar> | undefined;
    if (!entries || entries.size === 0) return rule.omitempty ? OMIT : null;
    const out: Record<string, unknown> = {};
    for (const key of [...entries.keys()].sort(compareCodePoints)) setOwn(out, key, scalarToJson(entries.get(key) as Scalar));
    return out;
  }
  if (field.repeated) {
    const list = value as Decoded[] | undefined;
    if (!list || list.length === 0) return rule.omitempty ? OMIT : null;
    return list.map((item) => (field.resolvedType ? messageValueToJson(item as DecodedMessage) : scalarToJson(item as Scalar)));
  }
  if (value === undefined && (rule.pointer || field.type === 'bytes')) return rule.omitempty ? OMIT : null;
  if (field.resolvedType) {
    const msg = (value as DecodedMessage | undefined) ?? { type: field.resolvedType as protobuf.Type, values: new Map(), byteLength: 0 };
    const json = messageValueToJson(msg);
    // omitzero is only declared on Time, whose zero value is the one that renders as null.
    return rule.omitzero && json === null ? OMIT : json;
  }
  const scalar = value === undefined ? zeroOf(field.type) : (value as Scalar);
  // A pointer seen on the wire is non-nil, so omitempty keeps it even when it points at a zero value.
  if (rule.omitempty && !rule.pointer && isEmptyScalar(scalar)) return OMIT;
  return scalarToJson(scalar);
}

function messageValueToJson(msg: DecodedMessage): unknown {
  const name = msg.type.fullName.slice(1);
  if (name === TIME_MESSAGE) return timeToJson(msg);
  if (name === FIELDS_V1_MESSAGE) return fieldsV1ToJson(msg);
  if (name === QUANTITY_MESSAGE) return String(msg.values.get('string') ?? '');
  return messageToJson(msg);
}

function zeroOf(type: string): Scalar {
  if (type === 'string') return '';
  if (type === 'bool') return false;
  return 0;
}

function isEmptyScalar(value: Scalar): boolean {
  return value instanceof Uint8Array ? value.length === 0 : value === '' || value === 0 || value === false;
}

function scalarToJson(value: Scalar): string | number | boolean {
  return value instanceof Uint8Array ? Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') : value;
}

/** metav1.Time: an empty message or the Go zero instant is null; nanos are dropped as upstream does. */
function timeToJson(msg: DecodedMessage): string | null {
  if (msg.byteLength === 0) return null;
  const seconds = BigInt((msg.values.get('seconds') as number | undefined) ?? 0);
  return seconds === ZERO_TIME_SECONDS ? null : formatRfc3339(seconds);
}

/** FieldsV1 marshals its raw bytes verbatim (null when empty); they must therefore be JSON. */
function fieldsV1ToJson(msg: DecodedMessage): unknown {
  const raw = msg.values.get('Raw') as Uint8Array | undefined;
  if (!raw || raw.length === 0) return null;
  try {
    return JSON.parse(utf8.decode(raw));
  } catch (err) {
    throw new DecodeError(`json: error calling MarshalJSON for type *v1.FieldsV1: ${(err as Error).message}`, { beforeKind: false });
  }
}

/** Unix seconds as Go's RFC 3339 layout in UTC (`2006-01-02T15:04:05Z`), for any int64 year. */
function formatRfc3339(seconds: bigint): string {
  let days = seconds / 86400n;
  let secondOfDay = seconds % 86400n;
  if (secondOfDay < 0n) {
    secondOfDay += 86400n;
    days -= 1n;
  }
  // Civil-from-days over 400-year eras (proleptic Gregorian calendar, as Go uses).
  const z = days + 719468n;
  const era = (z >= 0n ? z : z - 146096n) / 146097n;
  const dayOfEra = z - era * 146097n;
  const yearOfEra = (dayOfEra - dayOfEra / 1460n + dayOfEra / 36524n - dayOfEra / 146096n) / 365n;
  const dayOfYear = dayOfEra - (365n * yearOfEra + yearOfEra / 4n - yearOfEra / 100n);
  const mp = (5n * dayOfYear + 2n) / 153n;
  const day = dayOfYear - (153n * mp + 2n) / 5n + 1n;
  const month = mp < 10n ? mp + 3n : mp - 9n;
  const year = yearOfEra + era * 400n + (month <= 2n ? 1n : 0n);
  const pad = (n: bigint, width = 2): string => n.toString().padStart(width, '0');
  const time = [secondOfDay / 3600n, (secondOfDay / 60n) % 60n, secondOfDay % 60n].map((n) => pad(n)).join(':');
  return `${year < 0n ? '-' : ''}${pad(year < 0n ? -year : year, 4)}-${pad(month)}-${pad(day)}T${time}Z`;
}

/** Go sorts map keys by bytes; for valid UTF-8 that is code point order (not UTF-16 unit order). */
function compareCodePoints(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i].codePointAt(0) as number) - (y[i].codePointAt(0) as number);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** Assigns without invoking setters, so a map key such as `__proto__` stays an own data property. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
