import { Encoder } from 'cbor-x';
import { CBOR_SELF_DESCRIBED } from './cbor-decode.js';

// Plain CBOR of JSON values: no cbor-x records or shared structures, maps
// with their exact (definite, counted first) length, no tags for binary data.
const encoder = new Encoder({ useRecords: false, mapsAsObjects: true, tagUint8Array: false, structuredClone: false, pack: false });

/**
 * cbor-x writes integers beyond 32 bits as doubles; upstream writes them as
 * integers (a Go client reads a double into an int64 field as an error). A
 * double head and a 64-bit integer head are both 9 bytes, so the integer
 * replaces it in place.
 */
function integralDouble(buf: Buffer, pos: number): void {
  const v = buf.readDoubleBE(pos + 1);
  if (!Number.isInteger(v) || Math.abs(v) >= 2 ** 63) return;
  buf[pos] = v >= 0 ? 0x1b : 0x3b;
  buf.writeBigUInt64BE(v >= 0 ? BigInt(v) : BigInt(-1 - v), pos + 1);
}

/**
 * Turns every text string head of `buf` (a well-formed, definite-length CBOR
 * item as cbor-x writes JSON values) into a byte string head in place, as
 * upstream's encoder writes strings and keys (StringToByteString,
 * FieldNameToByteString), integral doubles into integers, and undefined
 * (which no JSON value holds) into null.
 */
function textToByteStrings(buf: Buffer, start: number): void {
  let pos = start;
  // Items still to read in each open array or map (maps count keys and values).
  const pending: number[] = [1];
  while (pending.length > 0) {
    if (pending[pending.length - 1] === 0) {
      pending.pop();
      continue;
    }
    pending[pending.length - 1]--;
    const b = buf[pos];
    const major = b >> 5;
    const info = b & 31;
    let arg = info;
    let headLen = 1;
    if (info === 24) (arg = buf[pos + 1]), (headLen = 2);
    else if (info === 25) (arg = buf.readUInt16BE(pos + 1)), (headLen = 3);
    else if (info === 26) (arg = buf.readUInt32BE(pos + 1)), (headLen = 5);
    else if (info === 27) (arg = Number(buf.readBigUInt64BE(pos + 1))), (headLen = 9);
    if (major === 3) buf[pos] = b ^ 0x20;
    else if (b === 0xfb) integralDouble(buf, pos);
    else if (b === 0xf7) buf[pos] = 0xf6;
    pos += headLen;
    if (major === 2 || major === 3) pos += arg;
    else if (major === 4) pending.push(arg);
    else if (major === 5) pending.push(arg * 2);
    else if (major === 6) pending.push(1);
  }
}

/**
 * Encodes JSON values (objects, arrays, strings, numbers, booleans, null;
 * undefined properties skipped) as one CBOR data item the way kube-apiserver
 * answers: behind the self-described CBOR tag (d9 d9 f7), strings and map
 * keys as byte strings, integers in their shortest form, maps in the
 * object's key order (upstream's response encoder does not sort either).
 * Returns a new Buffer; never mutates `value`.
 */
export function encodeCbor(value: unknown): Buffer {
  const body = encoder.encode(value);
  const out = Buffer.allocUnsafe(CBOR_SELF_DESCRIBED.length + body.length);
  CBOR_SELF_DESCRIBED.copy(out, 0);
  out.set(body, CBOR_SELF_DESCRIBED.length);
  textToByteStrings(out, CBOR_SELF_DESCRIBED.length);
  return out;
}
