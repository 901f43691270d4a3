import { DecodeError } from './decode-error.js';

/**
 * The head of every CBOR body kube-apiserver writes: tag 55799,
 * "self-described CBOR" (RFC 8949 §3.4.6). Upstream recognises CBOR by it.
 */
export const CBOR_SELF_DESCRIBED = Buffer.from([0xd9, 0xd9, 0xf7]);

/**
 * Upstream 1.35's decode limits (apimachinery's cbor/internal/modes
 * decode.go): nesting of arrays, maps and tags, and the elements of one
 * array or the pairs of one map. The body itself is capped at 3 MiB before
 * decoding, as for JSON.
 */
export const CBOR_LIMITS = { maxNestedLevels: 64, maxArrayElements: 1024, maxMapPairs: 1024 } as const;

const TYPE_NAMES = ['positive integer', 'negative integer', 'byte string', 'UTF-8 text string', 'array', 'map', 'tag', 'primitives'];
const INT64_MAX = 2n ** 63n - 1n;
const utf8 = new TextDecoder('utf-8', { fatal: true });
const lossyUtf8 = new TextDecoder('utf-8');

/** A decode failure; `structural` ones (and those at the top level) are found before upstream reads apiVersion/kind. */
class CborError extends Error {
  constructor(
    message: string,
    readonly structural = false,
  ) {
    super(message);
  }
}

function unacceptable(type: string, what: string): CborError {
  return new CborError(`cbor: data item of cbor type ${type} is not accepted by protocol: ${what}`);
}

/** Go's time.Time text form (RFC 3339 with nanoseconds, trailing zeros cut, `Z` for a zero offset). */
function rfc3339Nano(seconds: bigint, nanos: number, offsetMinutes: number): string {
  const date = new Date(Number(seconds + BigInt(offsetMinutes * 60)) * 1000);
  const year = date.getUTCFullYear();
  if (year < 0 || year > 9999) throw new Error('Time.MarshalText: year outside of range [0,9999]');
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  const frac = nanos ? `.${pad(nanos, 9).replace(/0+$/, '')}` : '';
  const zone = offsetMinutes === 0 ? 'Z' : `${offsetMinutes < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(offsetMinutes) / 60))}:${pad(Math.abs(offsetMinutes) % 60)}`;
  return `${pad(year, 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}${frac}${zone}`;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Tag 0's content: an RFC 3339 text, normalised as upstream's TimeTagToRFC3339Nano does. */
function rfc3339Tag(text: string): string {
  const m = RFC3339.exec(text);
  const fail = () => new CborError(`cbor: cannot set text for time.Time: parsing time ${JSON.stringify(text)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(text)} as "2006"`);
  if (!m) throw fail();
  const [, y, mo, d, h, mi, s, frac, , sign, oh, om] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const check = new Date(ms);
  if (check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) throw fail();
  const offset = sign ? (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)) : 0;
  const nanos = frac ? Number(frac.padEnd(9, '0')) : 0;
  return rfc3339Nano(BigInt(ms / 1000) - BigInt(offset * 60), nanos, offset);
}

/** Tag 1's content (seconds since the epoch), as an RFC 3339 text in UTC. */
function epochTag(value: number): string {
  const whole = Math.floor(value);
  const nanos = Math.round((value - whole) * 1e9);
  try {
    return rfc3339Nano(BigInt(whole), nanos, 0);
  } catch (err) {
    throw new CborError(`cbor: decoded time cannot be represented in RFC3339 format with sub-second precision: ${(err as Error).message}`);
  }
}

/** One open array, map or tag while decoding. */
interface Frame {
  kind: 'array' | 'map';
  value: unknown[] | Record<string, unknown>;
  /** Items (arrays) or pairs (maps) announced; -1 for indefinite length. */
  length: number;
  count: number;
  key: string | undefined;
}

/**
 * A decoder of one CBOR data item into JSON values with upstream's decode
 * mode: the checks no JavaScript CBOR library expresses (duplicate keys
 * refused outright, map keys only text or byte strings, Go's int64 range,
 * the simple values false/true/null only, no NaN or infinity, no bignum
 * tags, the nesting and size limits) with fxamacker/cbor's error texts.
 * Byte strings decode to strings (under tags 21–23 to their base64url,
 * base64 or hex text); tags 0 and 1 to RFC 3339 texts; tag 55799 and
 * unknown tags to their content.
 */
class Decoder {
  private pos = 0;
  private depth = 0;
  /** The innermost "expected later encoding" tag (21, 22, 23) around the current item. */
  private laterEncoding: number[] = [];

  constructor(private readonly data: Buffer) {}

  decode(): unknown {
    if (this.data.length === 0) throw new CborError('EOF', true);
    const value = this.item();
    if (this.pos !== this.data.length) {
      throw new CborError(`cbor: ${this.data.length - this.pos} bytes of extraneous data starting at index ${this.pos}`, true);
    }
    return value;
  }

  private need(n: number): void {
    if (this.pos + n > this.data.length) throw new CborError('unexpected EOF', true);
  }

  /** Reads a head: major type, additional info, argument (bigint only past 2^53). */
  private head(): { major: number; info: number; arg: number | bigint } {
    this.need(1);
    const b = this.data[this.pos++];
    const major = b >> 5;
    const info = b & 31;
    if (info < 24) return { major, info, arg: info };
    if (info === 24) {
      this.need(1);
      return { major, info, arg: this.data[this.pos++] };
    }
    if (info === 25) {
      this.need(2);
      const v = this.data.readUInt16BE(this.pos);
      this.pos += 2;
      return { major, info, arg: v };
    }
    if (info === 26) {
      this.need(4);
      const v = this.data.readUInt32BE(this.pos);
      this.pos += 4;
      return { major, info, arg: v };
    }
    if (info === 27) {
      this.need(8);
      const v = this.data.readBigUInt64BE(this.pos);
      this.pos += 8;
      return { major, info, arg: v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v };
    }
    if (info === 31 && major >= 2 && major <= 5) return { major, info, arg: -1 };
    if (info === 31 && major === 7) throw new CborError('cbor: unexpected "break" code', true);
    throw new CborError(`cbor: invalid additional information ${info} for type ${TYPE_NAMES[major]}`, true);
  }

  private enter(): void {
    if (++this.depth > CBOR_LIMITS.maxNestedLevels) throw new CborError(`cbor: exceeded max nested level ${CBOR_LIMITS.maxNestedLevels}`, true);
  }

  private isBreak(): boolean {
    this.need(1);
    if (this.data[this.pos] !== 0xff) return false;
    this.pos++;
    return true;
  }

  /** The bytes of a (possibly indefinite-length) string of `major` 2 or 3 whose head was read. */
  private stringBytes(major: number, arg: number | bigint): Buffer {
    if (arg !== -1) {
      const len = Number(arg);
      this.need(len);
      const out = this.data.subarray(this.pos, this.pos + len);
      this.pos += len;
      return out;
    }
    const chunks: Buffer[] = [];
    while (!this.isBreak()) {
      const h = this.head();
      if (h.major !== major) throw new CborError(`cbor: wrong element type ${TYPE_NAMES[h.major]} for indefinite-length ${TYPE_NAMES[major]}`, true);
      if (h.arg === -1) throw new CborError(`cbor: indefinite-length ${TYPE_NAMES[major]} chunk is not definite-length`, true);
      chunks.push(this.stringBytes(major, h.arg));
    }
    return Buffer.concat(chunks);
  }

  private text(bytes: Buffer): string {
    try {
      return utf8.decode(bytes);
    } catch {
      throw new CborError('cbor: invalid UTF-8 string');
    }
  }

  /** A byte string as Go's string(b), or its text encoding under a tag 21–23. */
  private bytesToString(bytes: Buffer): string {
    const tag = this.laterEncoding[this.laterEncoding.length - 1];
    if (tag === 21) return bytes.toString('base64url');
    if (tag === 22) return bytes.toString('base64');
    if (tag === 23) return bytes.toString('hex');
    return lossyUtf8.decode(bytes);
  }

  private integer(major: number, arg: number | bigint): number {
    if (typeof arg === 'bigint') {
      if (arg > INT64_MAX) {
        const shown = major === 0 ? arg.toString() : (-1n - arg).toString();
        throw new CborError(`cbor: cannot unmarshal ${TYPE_NAMES[major]} into Go value of type int64 (${shown} overflows Go's int64)`);
      }
      // Beyond 2^53 a number loses precision, as the JSON decoder's numbers do.
      return major === 0 ? Number(arg) : Number(-1n - arg);
    }
    return major === 0 ? arg : -1 - arg;
  }

  private simpleOrFloat(info: number, arg: number | bigint): unknown {
    if (info === 20) return false;
    if (info === 21) return true;
    if (info === 22) return null;
    if (info < 24) throw unacceptable('primitives', `simple value ${info} is not recognized`);
    if (info === 24) {
      if (Number(arg) < 32) throw new CborError(`cbor: invalid simple value ${Number(arg)} for type primitives`, true);
      throw unacceptable('primitives', `simple value ${Number(arg)} is not recognized`);
    }
    const width = info === 25 ? 2 : info === 26 ? 4 : 8;
    this.pos -= width;
    const v = width === 2 ? halfFloat(this.data.readUInt16BE(this.pos)) : width === 4 ? this.data.readFloatBE(this.pos) : this.data.readDoubleBE(this.pos);
    this.pos += width;
    if (Number.isNaN(v)) throw unacceptable('primitives', 'floating-point NaN');
    if (!Number.isFinite(v)) throw unacceptable('primitives', 'floating-point infinity');
    return v;
  }

  /** Decodes one data item at the current position. */
  private item(): unknown {
    const { major, info, arg } = this.head();
    switch (major) {
      case 0:
      case 1:
        return this.integer(major, arg);
      case 2:
        return this.bytesToString(this.stringBytes(2, arg));
      case 3:
        return this.text(this.stringBytes(3, arg));
      case 4:
        return this.container({ kind: 'array', value: [], length: Number(arg), count: 0, key: undefined });
      case 5:
        return this.container({ kind: 'map', value: {}, length: Number(arg), count: 0, key: undefined });
      case 6:
        return this.tagged(Number(arg), arg);
      default:
        return this.simpleOrFloat(info, arg);
    }
  }

  private container(frame: Frame): unknown {
    const limit = frame.kind === 'array' ? CBOR_LIMITS.maxArrayElements : CBOR_LIMITS.maxMapPairs;
    const tooMany = () =>
      new CborError(
        frame.kind === 'array' ? `cbor: exceeded max number of elements ${limit} for CBOR array` : `cbor: exceeded max number of key-value pairs ${limit} for CBOR map`,
        true,
      );
    if (frame.length > limit) throw tooMany();
    this.enter();
    for (; frame.length === -1 ? !this.isBreak() : frame.count < frame.length; frame.count++) {
      if (frame.count >= limit) throw tooMany();
      if (frame.kind === 'array') (frame.value as unknown[]).push(this.item());
      else this.pair(frame);
    }
    this.depth--;
    return frame.value;
  }

  private pair(frame: Frame): void {
    const map = frame.value as Record<string, unknown>;
    const key = this.mapKey();
    if (Object.prototype.hasOwnProperty.call(map, key)) {
      throw new CborError(`cbor: found duplicate map key ${JSON.stringify(key)} at map element index ${frame.count}`, this.depth === 1);
    }
    const value = this.item();
    // defineProperty: a "__proto__" key is data, not the prototype.
    if (key === '__proto__') Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
    else map[key] = value;
  }

  /** A map key: a text or byte string (self-described tags aside), as decoding into map[string]interface{} requires. */
  private mapKey(): string {
    let b = this.peek();
    while (b === 0xd9 && this.data[this.pos + 1] === 0xd9 && this.data[this.pos + 2] === 0xf7) {
      this.pos += 3;
      b = this.peek();
    }
    const major = b >> 5;
    if (major !== 2 && major !== 3) {
      throw new CborError(`cbor: cannot unmarshal ${TYPE_NAMES[major]} into Go value of type string`, this.depth === 1);
    }
    return this.item() as string;
  }

  private peek(): number {
    this.need(1);
    return this.data[this.pos];
  }

  private tagged(tag: number, raw: number | bigint): unknown {
    if (tag === 2 || tag === 3) throw new CborError(`cbor: data item of cbor type tag is not accepted by protocol: bignum`, true);
    this.enter();
    let out: unknown;
    if (tag === 0 || tag === 1) {
      const major = this.peek() >> 5;
      if (tag === 0 && major !== 3) throw new CborError(`cbor: tag number 0 must be followed by text string, got ${TYPE_NAMES[major]}`, true);
      if (tag === 1 && major !== 0 && major !== 1 && major !== 7) throw new CborError(`cbor: tag number 1 must be followed by integer or floating-point number, got ${TYPE_NAMES[major]}`, true);
      const content = this.item();
      if (tag === 0) out = rfc3339Tag(content as string);
      else if (typeof content !== 'number') throw new CborError(`cbor: tag number 1 must be followed by integer or floating-point number, got primitives`, true);
      else out = epochTag(content);
    } else if (tag >= 21 && tag <= 23 && raw === tag) {
      this.laterEncoding.push(tag);
      out = this.item();
      this.laterEncoding.pop();
    } else {
      // 55799 (self-described) and tags upstream does not recognise: their content.
      out = this.item();
    }
    this.depth--;
    return out;
  }
}

/** IEEE 754 half precision to a number. */
function halfFloat(h: number): number {
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  const sign = h & 0x8000 ? -1 : 1;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** Upstream's summary of an undecodable body that is not JSON: its first 30 bytes in hex, ` ...` when cut. */
export function summarizeBinary(data: Buffer): string {
  if (data.length === 0) return '<empty>';
  return data.length > 30 ? `${data.subarray(0, 30).toString('hex')} ...` : data.toString('hex');
}

/**
 * Decodes one CBOR data item (a request body) into JSON values with
 * kube-apiserver's rules (see Decoder). Throws DecodeError with upstream's
 * text: `beforeKind` errors (malformed or over the limits, or wrong at the
 * top level) read `unable to determine group/version/kind: cbor: …`, the
 * others `cbor: …`. Never mutates `data`.
 */
export function decodeCbor(data: Buffer): unknown {
  try {
    return new Decoder(data).decode();
  } catch (err) {
    if (!(err instanceof CborError)) throw err;
    if (err.structural) return throwDecode(`unable to determine group/version/kind: ${err.message}`, true);
    return throwDecode(err.message, false);
  }
}

function throwDecode(message: string, beforeKind: boolean): never {
  throw new DecodeError(message, { beforeKind });
}
