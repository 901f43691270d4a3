import { DecodeError, type StrictIssue } from './decode-error.js';

/** Result of strict JSON decoding. */
export interface StrictJsonResult {
  /** The decoded value; for duplicate keys the last occurrence wins, as in Go. */
  value: unknown;
  /** Duplicate-key field paths in document order, deduplicated, at most 100 (upstream's cap). */
  duplicates: string[];
}

const MAX_DEPTH = 10000;
const MAX_STRICT_ERRORS = 100;
const PARSE_PREFIX = "couldn't get version/kind; json parse error: ";

/**
 * Parses a JSON request body and reports duplicate keys as upstream field paths
 * (`spec.replicas`, `metadata.labels.a`, `spec.containers[0].name`, `[0].a` under a top-level array).
 * Keys are compared after unescaping (`"a"` and `"\u0061"` are the same key).
 * The common case costs one JSON.parse plus a linear pre-check; the text is scanned for duplicates
 * only when the pre-check cannot rule them out.
 * Throws DecodeError (beforeKind: true) with Go's wording for invalid JSON, e.g.
 * `couldn't get version/kind; json parse error: invalid character 'x' looking for beginning of value`,
 * and for nesting deeper than 10000; throws DecodeError (beforeKind: false)
 * `json: cannot unmarshal number 1e400 into Go value of type float64` for numbers beyond float64.
 */
export function parseJsonStrict(text: string): StrictJsonResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    scanJson(text, null);
    throw new DecodeError(PARSE_PREFIX + (err as Error).message);
  }
  if (value === null || typeof value !== 'object') return { value, duplicates: [] };
  const stats = inspectValue(value);
  if (stats.depth > MAX_DEPTH) scanJson(text, null);
  if (stats.nonFinite) throw nonFiniteNumberError(text);
  if (keyColonUpperBound(text) === stats.keys && !hasSurrogateEscape(text)) return { value, duplicates: [] };
  return { value, duplicates: findDuplicatePaths(text) };
}

/**
 * Orders findings the way upstream's typed (built-in kind) decoder reports them: in document order,
 * an unknown field at its first occurrence and a duplicate at its repeat, with no duplicate reported
 * for an unknown field or inside one (the typed decoder skips unknown subtrees), capped at 100.
 * `unknown` comes from findUnknownFields and `duplicates` from parseJsonStrict for the same `text`;
 * unknown paths not met in the text are appended. Pure; throws DecodeError only for invalid JSON.
 */
export function orderTypedStrictIssues(text: string, unknown: readonly string[], duplicates: readonly string[]): StrictIssue[] {
  const issues: StrictIssue[] = [];
  const unknownLeft = new Set(unknown);
  if (duplicates.length > 0 && unknown.length > 0) {
    const wanted = new Set(duplicates);
    const reported = new Set<string>();
    scanJson(text, (path, duplicate) => {
      if (unknownLeft.delete(path)) issues.push({ kind: 'unknown', path });
      else if (duplicate && wanted.has(path) && !reported.has(path) && !underAny(path, unknown)) {
        reported.add(path);
        issues.push({ kind: 'duplicate', path });
      }
    });
  } else {
    for (const path of duplicates) issues.push({ kind: 'duplicate', path });
  }
  for (const path of unknownLeft) issues.push({ kind: 'unknown', path });
  return issues.slice(0, MAX_STRICT_ERRORS);
}

function underAny(path: string, roots: readonly string[]): boolean {
  return roots.some((r) => path === r || (path.startsWith(r) && (path[r.length] === '.' || path[r.length] === '[')));
}

interface ValueStats {
  keys: number;
  depth: number;
  nonFinite: boolean;
}

/** Counts object keys, measures nesting and spots ±Infinity, iteratively so deep input cannot overflow the stack. */
function inspectValue(root: object): ValueStats {
  const values: unknown[] = [root];
  const depths: number[] = [1];
  let keys = 0;
  let maxDepth = 1;
  let nonFinite = false;
  while (values.length > 0) {
    const v = values.pop() as Record<string, unknown> | unknown[];
    const depth = depths.pop() as number;
    if (depth > maxDepth) maxDepth = depth;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const c = v[i];
        if (typeof c === 'object' && c !== null) {
          values.push(c);
          depths.push(depth + 1);
        } else if (typeof c === 'number' && c - c !== 0) {
          nonFinite = true;
        }
      }
    } else {
      for (const k in v) {
        keys++;
        const c = v[k];
        if (typeof c === 'object' && c !== null) {
          values.push(c);
          depths.push(depth + 1);
        } else if (typeof c === 'number' && c - c !== 0) {
          nonFinite = true;
        }
      }
    }
  }
  return { keys, depth: maxDepth, nonFinite };
}

/**
 * Counts colons whose previous non-blank character is a quote. Every key is followed by such a colon,
 * so the count bounds the number of keys in the text; inside strings only `\":` can add to it.
 * When it equals the number of keys in the parsed value, no key can have been repeated.
 */
function keyColonUpperBound(text: string): number {
  let count = 0;
  for (let i = text.indexOf(':'); i !== -1; i = text.indexOf(':', i + 1)) {
    let j = i - 1;
    let c = text.charCodeAt(j);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(--j);
    if (c === 0x22) count++;
  }
  return count;
}

/** Escaped surrogates can make keys equal for Go (both become U+FFFD) that differ for JSON.parse. */
function hasSurrogateEscape(text: string): boolean {
  return text.includes('\\u') && /\\u[dD][89a-fA-F]/.test(text);
}

function findDuplicatePaths(text: string): string[] {
  const found = new Set<string>();
  scanJson(text, (path, duplicate) => {
    if (duplicate && found.size < MAX_STRICT_ERRORS) found.add(path);
  });
  return [...found];
}

function nonFiniteNumberError(text: string): DecodeError {
  let literal = '';
  try {
    scanJson(text, null, (start, end) => {
      if (!Number.isFinite(Number(text.slice(start, end)))) {
        literal = text.slice(start, end);
        throw new Error('found');
      }
    });
  } catch {
    // The scan stops at the first out-of-range literal.
  }
  return new DecodeError(`json: cannot unmarshal number ${literal} into Go value of type float64`, { beforeKind: false });
}

/** Called for each object key in document order with its field path and whether it repeats a key of the same object. */
type KeyVisitor = (path: string, duplicate: boolean) => void;
type NumberVisitor = (start: number, end: number) => void;

interface Frame {
  object: boolean;
  prefix: string;
  index: number;
  key: string;
  keys: Set<string> | null;
}

/**
 * Validates `text` as JSON following Go's scanner state by state, so errors carry Go's wording, and
 * optionally visits keys and numbers. Throws DecodeError at the first syntax error.
 */
function scanJson(text: string, onKey: KeyVisitor | null, onNumber?: NumberVisitor): void {
  const stack: Frame[] = [];
  let i = 0;
  let prefix = '';
  for (;;) {
    i = skipSpace(text, i);
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) {
      if (stack.length >= MAX_DEPTH) throw invalidChar(text, i, 'exceeded max depth');
      const frame: Frame = { object: c === 0x7b, prefix, index: 0, key: '', keys: null };
      stack.push(frame);
      i = skipSpace(text, i + 1);
      if (text.charCodeAt(i) !== (frame.object ? 0x7d : 0x5d)) {
        if (frame.object) i = readKey(text, i, frame, onKey);
        prefix = onKey ? childPrefix(frame) : '';
        continue;
      }
      stack.pop();
      i++;
    } else {
      const start = i;
      i = scanScalar(text, i);
      if (onNumber && c !== 0x22 && c !== 0x74 && c !== 0x66 && c !== 0x6e) onNumber(start, i);
    }
    for (;;) {
      i = skipSpace(text, i, stack.length === 0);
      if (stack.length === 0) {
        if (i < text.length) throw invalidChar(text, i, 'after top-level value');
        return;
      }
      const top = stack[stack.length - 1];
      const d = text.charCodeAt(i);
      if (d === 0x2c) {
        if (top.object) i = readKey(text, skipSpace(text, i + 1), top, onKey);
        else {
          top.index++;
          i++;
        }
        prefix = onKey ? childPrefix(top) : '';
        break;
      }
      if (d === (top.object ? 0x7d : 0x5d)) {
        stack.pop();
        i++;
        continue;
      }
      throw invalidChar(text, i, top.object ? 'after object key:value pair' : 'after array element');
    }
  }
}

function childPrefix(frame: Frame): string {
  if (!frame.object) return `${frame.prefix}[${frame.index}]`;
  return frame.prefix === '' ? frame.key : `${frame.prefix}.${frame.key}`;
}

/** Skips JSON whitespace; running out of text is an error unless `endAllowed`. */
function skipSpace(text: string, from: number, endAllowed = false): number {
  let i = from;
  for (let c = text.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(++i));
  if (i >= text.length && !endAllowed) throw DecodeError.at(text, i, PARSE_PREFIX + 'unexpected end of JSON input');
  return i;
}

/** Reads `"key" :` at `i` and returns the index after the colon. */
function readKey(text: string, i: number, frame: Frame, onKey: KeyVisitor | null): number {
  if (text.charCodeAt(i) !== 0x22) throw invalidChar(text, i, 'looking for beginning of object key string');
  const end = scanString(text, i);
  const colon = skipSpace(text, end);
  if (text.charCodeAt(colon) !== 0x3a) throw invalidChar(text, colon, 'after object key');
  if (onKey) {
    const raw = text.slice(i + 1, end - 1);
    const key = raw.includes('\\') ? unescapeKey(text.slice(i, end)) : raw;
    frame.key = key;
    frame.keys ??= new Set();
    const duplicate = frame.keys.has(key);
    frame.keys.add(key);
    onKey(frame.prefix === '' ? key : `${frame.prefix}.${key}`, duplicate);
  }
  return colon + 1;
}

/** Go turns escaped lone surrogates into U+FFFD, which can make otherwise different keys equal. */
function unescapeKey(literal: string): string {
  return (JSON.parse(literal) as string).replace(/\p{Cs}/gu, '\ufffd');
}

/** Character code at `i`, or a space past the end: Go's scanner feeds a space at end of input. */
function at(text: string, i: number): number {
  return i < text.length ? text.charCodeAt(i) : 0x20;
}

function scanScalar(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 0x22) return scanString(text, i);
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return scanNumber(text, i);
  if (c === 0x74) return scanWord(text, i, 'true');
  if (c === 0x66) return scanWord(text, i, 'false');
  if (c === 0x6e) return scanWord(text, i, 'null');
  throw invalidChar(text, i, 'looking for beginning of value');
}

/** Scans the string starting with the quote at `i`; returns the index after the closing quote. */
function scanString(text: string, i: number): number {
  for (let j = i + 1; ; j++) {
    if (j >= text.length) throw DecodeError.at(text, j, PARSE_PREFIX + 'unexpected end of JSON input');
    const c = text.charCodeAt(j);
    if (c === 0x22) return j + 1;
    if (c < 0x20) throw invalidChar(text, j, 'in string literal');
    if (c !== 0x5c) continue;
    const e = at(text, ++j);
    if (e === 0x75) {
      for (let k = 0; k < 4; k++) {
        if (!isHex(at(text, ++j))) throw invalidChar(text, j, 'in \\u hexadecimal character escape');
      }
    } else if (!'bfnrt\\/"'.includes(String.fromCharCode(e))) {
      throw invalidChar(text, j, 'in string escape code');
    }
  }
}

function scanNumber(text: string, i: number): number {
  let j = i;
  if (text.charCodeAt(j) === 0x2d) {
    j++;
    if (!isDigit(at(text, j))) throw invalidChar(text, j, 'in numeric literal');
  }
  if (text.charCodeAt(j) === 0x30) j++;
  else while (isDigit(at(text, j))) j++;
  if (at(text, j) === 0x2e) {
    j++;
    if (!isDigit(at(text, j))) throw invalidChar(text, j, 'after decimal point in numeric literal');
    while (isDigit(at(text, j))) j++;
  }
  const e = at(text, j);
  if (e === 0x65 || e === 0x45) {
    j++;
    const sign = at(text, j);
    if (sign === 0x2b || sign === 0x2d) j++;
    if (!isDigit(at(text, j))) throw invalidChar(text, j, 'in exponent of numeric literal');
    while (isDigit(at(text, j))) j++;
  }
  return j;
}

function scanWord(text: string, i: number, word: string): number {
  for (let k = 1; k < word.length; k++) {
    if (at(text, i + k) !== word.charCodeAt(k)) throw invalidChar(text, i + k, `in literal ${word} (expecting '${word[k]}')`);
  }
  return i + word.length;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

function invalidChar(text: string, i: number, context: string): DecodeError {
  return DecodeError.at(text, i, `${PARSE_PREFIX}invalid character ${quoteByte(firstUtf8Byte(text, i))} ${context}`);
}

/** Go's scanner reports bytes, so a non-ASCII character shows as its first UTF-8 byte (U+FEFF → 'ï'). */
function firstUtf8Byte(text: string, i: number): number {
  const cp = i < text.length ? (text.codePointAt(i) as number) : 0x20;
  if (cp < 0x80) return cp;
  if (cp < 0x800) return 0xc0 | (cp >> 6);
  if (cp >= 0xd800 && cp <= 0xdfff) return 0xef;
  if (cp < 0x10000) return 0xe0 | (cp >> 12);
  return 0xf0 | (cp >> 18);
}

/** Go's quoteChar: a byte as a single-quoted Go character literal. */
function quoteByte(b: number): string {
  if (b === 0x27) return "'\\''";
  if (b === 0x22) return `'"'`;
  if (b === 0x5c) return "'\\\\'";
  if (b >= 0x20 && b < 0x7f) return `'${String.fromCharCode(b)}'`;
  if (b >= 0xa1 && b !== 0xad) return `'${String.fromCharCode(b)}'`;
  const named: Record<number, string> = { 7: 'a', 8: 'b', 9: 't', 10: 'n', 11: 'v', 12: 'f', 13: 'r' };
  if (named[b] !== undefined) return `'\\${named[b]}'`;
  return b < 0x80 ? `'\\x${b.toString(16).padStart(2, '0')}'` : `'\\u${b.toString(16).padStart(4, '0')}'`;
}
