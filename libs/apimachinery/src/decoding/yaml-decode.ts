import { Buffer } from 'node:buffer';
import { type Alias, type Document, LineCounter, type Node, type Scalar, isAlias, isMap, isScalar, isSeq, parseAllDocuments } from 'yaml';
import { DecodeError, goQuote } from './decode-error.js';

/** Result of strict YAML decoding. */
export interface StrictYamlResult {
  /** The document as plain JSON values (objects, arrays, strings, finite numbers, booleans, null). */
  value: unknown;
  /**
   * Duplicate keys in upstream's yaml.v2 wording, e.g. `line 11: key "foo" already set in map`, in
   * document order (the line is that of the repeated key's value). The caller reports them as one
   * strict error `yaml: unmarshal errors:\n  <entry>\n  <entry>` (see strictDecodingMessage).
   */
  duplicates: string[];
}

/**
 * Decodes a single-document YAML request body the way kube-apiserver converts YAML to JSON
 * (sigs.k8s.io/yaml over yaml.v2): YAML 1.1 plain scalars (`yes`/`on`/`y` are true, `010` is 8,
 * `1_000` is 1000), timestamps kept as strings, merge keys (`<<`), non-string keys stringified
 * (`1` → "1", `true` → "true"), and object keys sorted as Go's JSON encoder emits them. For duplicate
 * keys the last occurrence wins in `value`. Integers beyond 2^53 become the nearest number, as
 * JSON.parse does for JSON bodies. An empty body decodes to null.
 * Throws DecodeError (beforeKind: true) for syntax errors (`yaml: line N: …`), a second non-empty
 * document, unknown anchors, self-referencing or excessive aliases, null or collection keys and
 * `.inf`/`.nan` values (`json: unsupported value: +Inf`, as upstream's JSON conversion fails).
 */
export function parseYamlStrict(text: string): StrictYamlResult {
  const lineCounter = new LineCounter();
  const parsed = parseAllDocuments(text, { schema: 'failsafe', resolveKnownTags: false, uniqueKeys: false, prettyErrors: false, lineCounter });
  const docs = Array.isArray(parsed) ? parsed : [];
  for (const doc of docs) {
    const err = doc.errors[0];
    if (err) throw DecodeError.at(text, err.pos[0], `yaml: line ${lineCounter.linePos(err.pos[0]).line}: ${err.message}`);
  }
  if (docs.length === 0) return { value: null, duplicates: [] };
  const extra = docs.slice(1).find((d) => !isEmptyDocument(d.contents));
  if (extra) {
    const offset = extra.contents?.range[0] ?? 0;
    throw DecodeError.at(text, offset, `yaml: a request body must hold a single document, found another at line ${lineCounter.linePos(offset).line}`);
  }
  const converter = new YamlConverter(docs[0], text, lineCounter);
  const value = converter.value(docs[0].contents);
  return { value, duplicates: converter.duplicates };
}

function isEmptyDocument(contents: Node | null): boolean {
  return contents === null || (isScalar(contents) && contents.type === 'PLAIN' && (contents.value ?? '') === '' && !contents.tag && !contents.anchor);
}

/** A scalar resolved as yaml.v2 does, before conversion to JSON. */
type Resolved =
  | { tag: 'str'; value: string }
  | { tag: 'int' | 'uint'; value: bigint }
  | { tag: 'float'; value: number }
  | { tag: 'bool'; value: boolean }
  | { tag: 'null'; value: null };

interface Entry {
  key: string;
  value: unknown;
}

const ALIAS_RATIO_LOW = 400_000;
const ALIAS_RATIO_HIGH = 4_000_000;

/** Walks one parsed document, producing JSON values and collecting duplicate-key messages. */
class YamlConverter {
  readonly duplicates: string[] = [];
  private decodeCount = 0;
  private aliasCount = 0;
  private aliasDepth = 0;
  private readonly expanding = new Set<Node>();

  constructor(
    private readonly doc: Document,
    private readonly text: string,
    private readonly lines: LineCounter,
  ) {}

  value(node: unknown): unknown {
    this.countDecode(node);
    if (node === null || node === undefined) return null;
    if (isAlias(node)) return this.viaAlias(node, (target) => this.value(target));
    if (isScalar(node)) return scalarToJson(this.text, node, resolveScalar(this.text, node));
    if (isSeq(node)) return node.items.map((item) => this.value(item));
    if (isMap(node)) {
      const entries = new Map<string, Entry>();
      this.fill(node, entries);
      return toObject(entries);
    }
    throw this.fail(null, 'yaml: unsupported node');
  }

  private fill(map: Node, entries: Map<string, Entry>): void {
    if (!isMap(map)) return;
    for (const pair of map.items) {
      if (isMergeKey(pair.key)) {
        this.merge(pair.value as Node | null, entries);
        continue;
      }
      const key = this.key(pair.key as Node | null);
      const value = this.value(pair.value);
      const at = (pair.value ?? pair.key) as Node | null;
      const existing = entries.get(key.id);
      if (existing) this.duplicates.push(`line ${this.lineOf(at)}: key ${key.display} already set in map`);
      entries.set(key.id, { key: jsonKey(this.text, at, key.resolved, value), value });
    }
  }

  /** yaml.v2 merge: a map, an alias of one, or a sequence of them applied last to first. */
  private merge(node: Node | null, entries: Map<string, Entry>): void {
    const mergeOne = (n: unknown): void => {
      const target = isAlias(n) ? n.resolve(this.doc) : n;
      if (!isMap(target)) throw this.fail(n as Node, 'yaml: map merge requires map or sequence of maps as the value');
      if (isAlias(n)) this.viaAlias(n, (t) => this.fill(t, entries));
      else this.fill(target, entries);
    };
    if (isSeq(node)) {
      for (let i = node.items.length - 1; i >= 0; i--) mergeOne(node.items[i]);
    } else {
      mergeOne(node);
    }
  }

  private key(node: Node | null): { id: string; display: string; resolved: Resolved } {
    this.countDecode(node);
    if (isAlias(node)) return this.viaAlias(node, (target) => this.key(target));
    if (node !== null && !isScalar(node)) throw this.fail(node, `yaml: invalid map key: ${goSharpV(this.value(node))}`);
    const resolved: Resolved = node === null ? { tag: 'null', value: null } : resolveScalar(this.text, node);
    const id = resolved.tag === 'float' && Number.isNaN(resolved.value) ? `nan:${this.decodeCount}` : `${resolved.tag}:${String(resolved.value)}`;
    return { id, display: displayKey(resolved), resolved };
  }

  private viaAlias<T>(alias: Alias, use: (target: Node) => T): T {
    const target = alias.resolve(this.doc);
    if (!target) throw this.fail(alias, `yaml: unknown anchor '${alias.source}' referenced`);
    if (this.expanding.has(alias)) throw this.fail(alias, `yaml: anchor '${alias.source}' value contains itself`);
    this.expanding.add(alias);
    this.aliasDepth++;
    try {
      return use(target);
    } finally {
      this.aliasDepth--;
      this.expanding.delete(alias);
    }
  }

  /** yaml.v2's guard against alias bombs: too high a share of nodes decoded through aliases. */
  private countDecode(node: unknown): void {
    this.decodeCount++;
    if (this.aliasDepth > 0) this.aliasCount++;
    if (this.aliasCount > 100 && this.decodeCount > 1000 && this.aliasCount / this.decodeCount > allowedAliasRatio(this.decodeCount)) {
      throw this.fail(node as Node, 'yaml: document contains excessive aliasing');
    }
  }

  private lineOf(node: Node | null): number {
    return this.lines.linePos(node?.range?.[0] ?? 0).line;
  }

  private fail(node: Node | null, message: string): DecodeError {
    return DecodeError.at(this.text, node?.range?.[0] ?? 0, message);
  }
}

function allowedAliasRatio(decodeCount: number): number {
  if (decodeCount <= ALIAS_RATIO_LOW) return 0.99;
  if (decodeCount >= ALIAS_RATIO_HIGH) return 0.1;
  return 0.99 - (0.89 * (decodeCount - ALIAS_RATIO_LOW)) / (ALIAS_RATIO_HIGH - ALIAS_RATIO_LOW);
}

function isMergeKey(key: unknown): boolean {
  if (!isScalar(key) || key.value !== '<<') return false;
  return key.tag === 'tag:yaml.org,2002:merge' || (!key.tag && key.type === 'PLAIN');
}

/** Builds the object with keys in Go's JSON encoder order; `__proto__` stays an own key. */
function toObject(entries: Map<string, Entry>): Record<string, unknown> {
  const byKey = new Map<string, unknown>();
  for (const e of entries.values()) byKey.set(e.key, e.value);
  const out: Record<string, unknown> = {};
  for (const k of [...byKey.keys()].sort()) {
    Object.defineProperty(out, k, { value: byKey.get(k), writable: true, enumerable: true, configurable: true });
  }
  return out;
}

function scalarToJson(text: string, node: Node, r: Resolved): unknown {
  if (r.tag === 'int' || r.tag === 'uint') return Number(r.value);
  if (r.tag === 'float' && !Number.isFinite(r.value)) {
    throw DecodeError.at(text, node.range?.[0] ?? 0, `json: unsupported value: ${goFormatFloat(r.value, 64)}`);
  }
  return r.value;
}

/** sigs.k8s.io/yaml's conversion of a map key to a JSON object key. */
function jsonKey(text: string, at: Node | null, r: Resolved, value: unknown): string {
  switch (r.tag) {
    case 'str':
      return r.value;
    case 'int':
      return r.value.toString();
    case 'bool':
      return String(r.value);
    case 'float': {
      const s = goFormatFloat(r.value, 32);
      return s === '+Inf' ? '.inf' : s === '-Inf' ? '-.inf' : s === 'NaN' ? '.nan' : s;
    }
    default: {
      const type = r.tag === 'uint' ? 'uint64' : '%!s(<nil>)';
      const message = `unsupported map key of type: ${type}, key: ${displayKey(r)}, value: ${goSharpV(value)}`;
      throw DecodeError.at(text, at?.range?.[0] ?? 0, message);
    }
  }
}

/** A key as Go's `%#v` prints it in yaml.v2's duplicate-key message. */
function displayKey(r: Resolved): string {
  switch (r.tag) {
    case 'str':
      return goQuote(r.value);
    case 'uint':
      return '0x' + r.value.toString(16);
    case 'float':
      return goFormatFloat(r.value, 64);
    case 'null':
      return '<nil>';
    default:
      return String(r.value);
  }
}

/** Approximates Go's `%#v` of a decoded YAML value, for error messages only. */
function goSharpV(v: unknown): string {
  if (v === null) return '<nil>';
  if (typeof v === 'string') return goQuote(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSharpV).join(', ')}}`;
  if (typeof v === 'object') {
    const items = Object.entries(v as Record<string, unknown>).map(([k, x]) => `${goQuote(k)}:${goSharpV(x)}`);
    return `map[interface {}]interface {}{${items.join(', ')}}`;
  }
  return String(v);
}

const YAML_TAG = 'tag:yaml.org,2002:';
const RESOLVABLE = new Set(['', 'str', 'bool', 'int', 'float', 'null', 'timestamp']);
const FIXED = new Map<string, Resolved>();
for (const s of ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']) FIXED.set(s, { tag: 'bool', value: true });
for (const s of ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']) FIXED.set(s, { tag: 'bool', value: false });
for (const s of ['', '~', 'null', 'Null', 'NULL']) FIXED.set(s, { tag: 'null', value: null });
for (const s of ['.nan', '.NaN', '.NAN']) FIXED.set(s, { tag: 'float', value: NaN });
for (const s of ['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF']) FIXED.set(s, { tag: 'float', value: Infinity });
for (const s of ['-.inf', '-.Inf', '-.INF']) FIXED.set(s, { tag: 'float', value: -Infinity });
const YAML_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const DOT_FLOAT = /^\.[0-9]+([eE][-+]?[0-9]+)?$/;
const TIMESTAMP = /^\d{4}-\d{1,2}-\d{1,2}(?:[Tt]\d{1,2}:\d{1,2}:\d{1,2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})| \d{1,2}:\d{1,2}:\d{1,2}(?:\.\d+)?)?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** yaml.v2's scalar resolution: explicit tags are checked, plain scalars follow YAML 1.1 rules. */
function resolveScalar(text: string, node: Scalar): Resolved {
  const input = node.value === null || node.value === undefined ? '' : String(node.value);
  const tag = node.tag?.startsWith(YAML_TAG) ? node.tag.slice(YAML_TAG.length) : (node.tag ?? '');
  if (tag === 'binary') return { tag: 'str', value: decodeBinary(text, node, input) };
  if (!RESOLVABLE.has(tag) || (tag === '' && node.type !== 'PLAIN')) return { tag: 'str', value: input };
  if (tag === 'timestamp' && TIMESTAMP.test(input)) return { tag: 'str', value: input };
  const r = tag === 'str' ? ({ tag: 'str', value: input } as const) : resolvePlain(input);
  if (tag === '' || tag === 'str' || tag === r.tag || (tag === 'int' && r.tag === 'uint')) return r;
  if (tag === 'float' && (r.tag === 'int' || r.tag === 'uint')) return { tag: 'float', value: Number(r.value) };
  const got = r.tag === 'uint' ? 'int' : r.tag;
  throw DecodeError.at(text, node.range?.[0] ?? 0, `yaml: cannot decode !!${got} \`${input}\` as a !!${tag}`);
}

function resolvePlain(input: string): Resolved {
  const fixed = FIXED.get(input);
  if (fixed) return fixed;
  const c = input[0];
  if (c === '.') {
    if (DOT_FLOAT.test(input)) return finiteFloat(input) ?? { tag: 'str', value: input };
  } else if (c === '+' || c === '-' || (c >= '0' && c <= '9')) {
    const plain = input.replaceAll('_', '');
    const int = parseGoInt(plain);
    if (int !== null) return { tag: 'int', value: int };
    const uint = parseGoUnsigned(plain);
    if (uint !== null && uint <= UINT64_MAX) return { tag: 'uint', value: uint };
    if (YAML_FLOAT.test(plain)) return finiteFloat(plain) ?? { tag: 'str', value: input };
  }
  return { tag: 'str', value: input };
}

/** Go's ParseFloat fails on overflow, so such literals stay strings. */
function finiteFloat(s: string): Resolved | undefined {
  const f = Number(s);
  return Number.isFinite(f) ? { tag: 'float', value: f } : undefined;
}

/** Go's strconv.ParseInt(s, 0, 64): optional sign, 0x/0o/0b prefixes, leading-zero octal. */
function parseGoInt(s: string): bigint | null {
  const negative = s.startsWith('-');
  const magnitude = parseGoUnsigned(s.startsWith('-') || s.startsWith('+') ? s.slice(1) : s);
  if (magnitude === null) return null;
  const v = negative ? -magnitude : magnitude;
  return v >= INT64_MIN && v <= INT64_MAX ? v : null;
}

function parseGoUnsigned(s: string): bigint | null {
  if (/^0[xX][0-9a-fA-F]+$/.test(s) || /^0[oO][0-7]+$/.test(s) || /^0[bB][01]+$/.test(s)) return BigInt(s);
  if (/^0[0-7]+$/.test(s)) return BigInt('0o' + s.slice(1));
  if (/^(0|[1-9][0-9]*)$/.test(s)) return BigInt(s);
  return null;
}

/** yaml.v2 decodes `!!binary` to its bytes; Go's JSON encoder then replaces invalid UTF-8. */
function decodeBinary(text: string, node: Node, input: string): string {
  const b64 = input.replace(/[\r\n]/g, '');
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(b64)) {
    throw DecodeError.at(text, node.range?.[0] ?? 0, 'yaml: !!binary value contains invalid base64 data');
  }
  return Buffer.from(b64, 'base64').toString('utf8');
}

/** Go's strconv.FormatFloat(x, 'g', -1, bits): shortest digits, exponent form below 1e-4 or from 1e6. */
function goFormatFloat(x: number, bits: 32 | 64): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  const v = bits === 32 ? Math.fround(x) : x;
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  let e = v.toExponential();
  if (bits === 32) {
    for (let p = 0; p < 9; p++) {
      e = v.toExponential(p);
      if (Math.fround(Number(e)) === v) break;
    }
  }
  const [, sign, first, rest = '', expText] = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(e) as RegExpExecArray;
  const digits = first + rest;
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) {
    const mantissa = rest ? `${first}.${rest}` : first;
    return `${sign}${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const frac = digits.slice(exp + 1);
  return frac ? `${sign}${whole}.${frac}` : `${sign}${whole}`;
}
