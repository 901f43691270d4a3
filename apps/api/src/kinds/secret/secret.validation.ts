import { fieldErrors, type FieldError } from '@plinth/apimachinery';
import type { KubeObject } from '@plinth/apimachinery';
import {
  IMMUTABLE_WHEN_SET_MSG,
  MAX_SECRET_SIZE,
  decodeGoBase64,
  readStoredMap,
  readStringMap,
  sameMap,
} from '../configmap/configmap.validation.js';
import { goQuote, isConfigMapKey } from '@plinth/apimachinery';
import { FIELD_IMMUTABLE_MSG, validateKubeFinalizers } from '@plinth/apimachinery';

/** What upstream shows instead of a secret's value in an error. */
export const REDACTED = '<secret contents redacted>';

type ParseState = 'key' | 'value' | 'array';
type ScanState =
  | 'beginValue'
  | 'beginValueOrEmpty'
  | 'beginStringOrEmpty'
  | 'beginString'
  | 'endValue'
  | 'endTop'
  | 'inString'
  | 'inStringEsc'
  | 'inStringEscU'
  | 'neg'
  | 'one'
  | 'zero'
  | 'dot'
  | 'dot0'
  | 'exp'
  | 'expSign'
  | 'exp0'
  | 'literal';

const MAX_NESTING_DEPTH = 10000;
const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/** Go's scanner quoteChar: the byte as a Go rune literal. */
function quoteChar(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === 0x22) return `'"'`;
  return `'${goQuote(String.fromCharCode(c)).slice(1, -1)}'`;
}

/**
 * A port of the state machine in Go's encoding/json scanner, so syntax
 * errors read exactly as upstream reports them. Feed bytes with step();
 * `error` is set on the first bad byte.
 */
class GoJsonScanner {
  state: ScanState = 'beginValue';
  endTop = false;
  error: string | undefined;
  private stack: ParseState[] = [];
  private literal = '';
  private literalPos = 0;
  private hexSeen = 0;

  step(c: number): void {
    while (!this.error && this.dispatch(c));
  }

  /** Handles `c` in the current state; true means "re-process c in the new state". */
  private dispatch(c: number): boolean {
    switch (this.state) {
      case 'beginValue':
      case 'beginValueOrEmpty':
      case 'beginStringOrEmpty':
      case 'beginString':
        return this.begin(c);
      case 'endValue':
      case 'endTop':
        return this.end(c);
      case 'inString':
      case 'inStringEsc':
      case 'inStringEscU':
        return this.inString(c);
      case 'literal':
        return this.inLiteral(c);
      default:
        return this.inNumber(c);
    }
  }

  private fail(c: number, context: string): boolean {
    this.error = `invalid character ${quoteChar(c)} ${context}`;
    return false;
  }

  private push(c: number, p: ParseState, next: ScanState): boolean {
    this.stack.push(p);
    this.state = next;
    return this.stack.length > MAX_NESTING_DEPTH ? this.fail(c, 'exceeded max depth') : false;
  }

  private begin(c: number): boolean {
    if (isSpace(c)) return false;
    const s = this.state;
    if (s === 'beginValueOrEmpty') return this.goto(c === 0x5d ? 'endValue' : 'beginValue');
    if (s === 'beginStringOrEmpty') {
      if (c !== 0x7d) return this.goto('beginString');
      this.stack[this.stack.length - 1] = 'value';
      return this.goto('endValue');
    }
    if (s === 'beginString') {
      if (c !== 0x22) return this.fail(c, 'looking for beginning of object key string');
      this.state = 'inString';
      return false;
    }
    if (c === 0x7b) return this.push(c, 'key', 'beginStringOrEmpty');
    if (c === 0x5b) return this.push(c, 'array', 'beginValueOrEmpty');
    const simple: Record<number, ScanState> = { 0x22: 'inString', 0x2d: 'neg', 0x30: 'zero' };
    if (simple[c]) this.state = simple[c];
    else if (c >= 0x31 && c <= 0x39) this.state = 'one';
    else if (c === 0x74 || c === 0x66 || c === 0x6e) {
      this.literal = c === 0x74 ? 'true' : c === 0x66 ? 'false' : 'null';
      this.literalPos = 1;
      this.state = 'literal';
    } else return this.fail(c, 'looking for beginning of value');
    return false;
  }

  private goto(s: ScanState): boolean {
    this.state = s;
    return true;
  }

  private pop(): boolean {
    this.stack.pop();
    if (this.stack.length === 0) this.endTop = true;
    this.state = this.stack.length === 0 ? 'endTop' : 'endValue';
    return false;
  }

  private end(c: number): boolean {
    if (this.state === 'endTop') return isSpace(c) ? false : this.fail(c, 'after top-level value');
    if (this.stack.length === 0) {
      this.endTop = true;
      return this.goto('endTop');
    }
    if (isSpace(c)) return false;
    const top = this.stack.length - 1;
    switch (this.stack[top]) {
      case 'key':
        if (c !== 0x3a) return this.fail(c, 'after object key');
        this.stack[top] = 'value';
        this.state = 'beginValue';
        return false;
      case 'value':
        if (c === 0x7d) return this.pop();
        if (c !== 0x2c) return this.fail(c, 'after object key:value pair');
        this.stack[top] = 'key';
        this.state = 'beginString';
        return false;
      default:
        if (c === 0x5d) return this.pop();
        if (c !== 0x2c) return this.fail(c, 'after array element');
        this.state = 'beginValue';
        return false;
    }
  }

  private inString(c: number): boolean {
    if (this.state === 'inStringEsc') {
      if (c === 0x75) {
        this.hexSeen = 0;
        this.state = 'inStringEscU';
      } else if ('bfnrt\\/"'.includes(String.fromCharCode(c))) this.state = 'inString';
      else return this.fail(c, 'in string escape code');
      return false;
    }
    if (this.state === 'inStringEscU') {
      if (!isHex(c)) return this.fail(c, 'in \\u hexadecimal character escape');
      if (++this.hexSeen === 4) this.state = 'inString';
      return false;
    }
    if (c === 0x22) this.state = 'endValue';
    else if (c === 0x5c) this.state = 'inStringEsc';
    else if (c < 0x20) return this.fail(c, 'in string literal');
    return false;
  }

  private inLiteral(c: number): boolean {
    const want = this.literal.charCodeAt(this.literalPos);
    if (c !== want) return this.fail(c, `in literal ${this.literal} (expecting '${this.literal[this.literalPos]}')`);
    if (++this.literalPos === this.literal.length) this.state = 'endValue';
    return false;
  }

  private inNumber(c: number): boolean {
    const isExp = c === 0x65 || c === 0x45;
    switch (this.state) {
      case 'neg':
        if (c === 0x30) this.state = 'zero';
        else if (isDigit(c)) this.state = 'one';
        else return this.fail(c, 'in numeric literal');
        return false;
      case 'one':
        return isDigit(c) ? false : this.goto('zero');
      case 'zero':
        if (c === 0x2e) this.state = 'dot';
        else if (isExp) this.state = 'exp';
        else return this.goto('endValue');
        return false;
      case 'dot':
        if (!isDigit(c)) return this.fail(c, 'after decimal point in numeric literal');
        this.state = 'dot0';
        return false;
      case 'dot0':
        if (isExp) this.state = 'exp';
        else if (!isDigit(c)) return this.goto('endValue');
        return false;
      case 'exp':
        if (c === 0x2b || c === 0x2d) this.state = 'expSign';
        else return this.goto('expSign');
        return false;
      case 'expSign':
        if (!isDigit(c)) return this.fail(c, 'in exponent of numeric literal');
        this.state = 'exp0';
        return false;
      default:
        return isDigit(c) ? false : this.goto('endValue');
    }
  }
}

/**
 * What Go's `json.Unmarshal(bytes, &map[string]interface{}{})` returns as
 * error text, or undefined when it succeeds (an object or `null`).
 */
export function goJsonMapError(bytes: Uint8Array): string | undefined {
  const scanner = new GoJsonScanner();
  for (const c of bytes) {
    scanner.step(c);
    if (scanner.error) return scanner.error;
  }
  if (!scanner.endTop) {
    scanner.step(0x20);
    if (scanner.error) return scanner.error;
    if (!scanner.endTop) return 'unexpected end of JSON input';
  }
  const first = bytes.find((c) => !isSpace(c)) ?? 0;
  if (first === 0x7b || first === 0x6e) return undefined;
  const kind = first === 0x5b ? 'array' : first === 0x22 ? 'string' : first === 0x74 || first === 0x66 ? 'bool' : 'number';
  return `json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`;
}

/**
 * The payload as upstream validates it: `data` decoded from base64, then
 * `stringData` laid over it (the v1→internal conversion). Undecodable
 * values map to undefined and yield an error on `data[key]`.
 */
function effectiveData(obj: KubeObject): { data?: Map<string, Uint8Array | undefined>; errs: FieldError[] } {
  const raw = readStringMap(obj.data);
  const stringData = readStringMap(obj.stringData) ?? {};
  const errs: FieldError[] = [];
  if (raw === undefined && Object.keys(stringData).length === 0) return { errs };
  const data = new Map<string, Uint8Array | undefined>();
  for (const [key, value] of Object.entries(raw ?? {})) {
    const decoded = decodeGoBase64(value);
    if (!decoded.ok) errs.push(fieldErrors.invalid(`data[${key}]`, REDACTED, decoded.error));
    data.set(key, decoded.ok ? decoded.bytes : undefined);
  }
  for (const [key, value] of Object.entries(stringData)) data.set(key, new TextEncoder().encode(value));
  return { data, errs };
}

function validateJsonKey(data: Map<string, Uint8Array | undefined>, key: string): FieldError[] {
  const field = `data[${key}]`;
  if (!data.has(key)) return [fieldErrors.required(field, '')];
  const bytes = data.get(key);
  const error = bytes && goJsonMapError(bytes);
  return error ? [fieldErrors.invalid(field, REDACTED, error)] : [];
}

/** The per-type rules for the well-known Secret types; unknown types and Opaque have none. */
function validateSecretType(obj: KubeObject, data: Map<string, Uint8Array | undefined>): FieldError[] {
  const has = (k: string): boolean => data.has(k);
  switch (typeof obj.type === 'string' ? obj.type : '') {
    case 'kubernetes.io/service-account-token': {
      const key = 'kubernetes.io/service-account.name';
      return obj.metadata.annotations?.[key] ? [] : [fieldErrors.required(`metadata.annotations[${key}]`, '')];
    }
    case 'kubernetes.io/dockercfg':
      return validateJsonKey(data, '.dockercfg');
    case 'kubernetes.io/dockerconfigjson':
      return validateJsonKey(data, '.dockerconfigjson');
    case 'kubernetes.io/basic-auth':
      // Either key may be empty or absent, but not both absent.
      return has('username') || has('password')
        ? []
        : [fieldErrors.required('data[username]', ''), fieldErrors.required('data[password]', '')];
    case 'kubernetes.io/ssh-auth':
      return (data.get('ssh-privatekey')?.length ?? 0) > 0 ? [] : [fieldErrors.required('data[ssh-privatekey]', '')];
    case 'kubernetes.io/tls':
      return [
        ...(has('tls.crt') ? [] : [fieldErrors.required('data[tls.crt]', '')]),
        ...(has('tls.key') ? [] : [fieldErrors.required('data[tls.key]', '')]),
      ];
    default:
      return [];
  }
}

/**
 * Kind-specific checks of a Secret (upstream ValidateSecret minus the
 * generic ObjectMeta part, which the caller runs): data keys are config
 * keys, values valid base64 (an upstream decode error, reported here on
 * `data[key]`), payload at most 1 MiB (`data: Too long`), the required keys
 * of the well-known types, plus the core-kind finalizer-name rule.
 * `stringData`, if still present, is folded into data first. Pure; returns
 * [] when valid.
 */
export function validateSecret(obj: KubeObject): FieldError[] {
  const { data = new Map<string, Uint8Array | undefined>(), errs: decodeErrs } = effectiveData(obj);
  const errs: FieldError[] = [...validateKubeFinalizers(obj.metadata), ...decodeErrs];
  let total = 0;
  for (const [key, bytes] of data) {
    for (const msg of isConfigMapKey(key)) errs.push(fieldErrors.invalid(`data[${key}]`, key, msg));
    total += bytes?.length ?? 0;
  }
  if (total > MAX_SECRET_SIZE) errs.push(fieldErrors.tooLong('data', '', MAX_SECRET_SIZE));
  errs.push(...validateSecretType(obj, data));
  return errs;
}

/** Bytes as a comparable string; undecodable values stay distinct from every decodable one. */
function comparable(data: Map<string, Uint8Array | undefined> | undefined, raw: unknown): Record<string, string> | undefined {
  if (!data) return undefined;
  const rawMap = readStringMap(raw) ?? {};
  const out: Record<string, string> = {};
  for (const [k, v] of data) out[k] = v ? `b:${Array.from(v, (b) => String.fromCharCode(b)).join('')}` : `x:${rawMap[k]}`;
  return out;
}

/** Secret `type` after upstream defaulting: empty means Opaque. */
function secretType(obj: KubeObject): string {
  return typeof obj.type === 'string' && obj.type !== '' ? obj.type : 'Opaque';
}

/**
 * Upstream ValidateSecretUpdate minus generic ObjectMeta checks: the core
 * finalizer rule on the new metadata, `type` unchanged (`type: Invalid
 * value: ...: field is immutable`), and when the old Secret is immutable,
 * `immutable` may not be unset and data may not change; then validateSecret
 * of the new object. Pure; returns [] when valid.
 */
export function validateSecretUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs: FieldError[] = [...validateKubeFinalizers(obj.metadata)];
  if (secretType(obj) !== secretType(old)) errs.push(fieldErrors.invalid('type', secretType(obj), FIELD_IMMUTABLE_MSG));
  if (old.immutable === true) {
    if (obj.immutable !== true) errs.push(fieldErrors.forbidden('immutable', IMMUTABLE_WHEN_SET_MSG));
    const newData = comparable(effectiveData(obj).data, obj.data);
    const storedOld = { ...old, data: readStoredMap(old.data), stringData: undefined };
    const oldData = comparable(effectiveData(storedOld).data, old.data);
    if (!sameMap(newData, oldData)) errs.push(fieldErrors.forbidden('data', IMMUTABLE_WHEN_SET_MSG));
  }
  errs.push(...validateSecret(obj));
  return errs;
}
