/** Where in a request body a decode error was found; `line` and `column` are 1-based, in UTF-16 units. */
export interface DecodePosition {
  offset: number;
  line: number;
  column: number;
}

/** Options of a {@link DecodeError}. */
export interface DecodeErrorOptions {
  position?: DecodePosition;
  /**
   * True when upstream fails before it could read apiVersion/kind (syntax errors, YAML→JSON conversion
   * errors). The handler then wraps the message as
   * `the object provided is unrecognized (must be of type <Kind>): <message> (<body summary>)`;
   * otherwise as `<Kind> in version "<version>" cannot be handled as a <Kind>: <message>`.
   */
  beforeKind?: boolean;
}

/**
 * A request body that cannot be decoded. `message` is the client-facing text in upstream wording
 * (e.g. `couldn't get version/kind; json parse error: invalid character 'x' looking for beginning of value`),
 * without the handler's wrapper; the HTTP layer maps it to 400 BadRequest.
 */
export class DecodeError extends Error {
  override readonly name = 'DecodeError';
  readonly position: DecodePosition | undefined;
  readonly beforeKind: boolean;

  constructor(message: string, options: DecodeErrorOptions = {}) {
    super(message);
    this.position = options.position;
    this.beforeKind = options.beforeKind ?? true;
  }

  /** A DecodeError positioned at `offset` (clamped to the text) of `text`; never throws. */
  static at(text: string, offset: number, message: string, beforeKind = true): DecodeError {
    return new DecodeError(message, { position: positionOf(text, offset), beforeKind });
  }
}

function positionOf(text: string, rawOffset: number): DecodePosition {
  const offset = Math.max(0, Math.min(rawOffset, text.length));
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { offset, line, column: offset - lineStart + 1 };
}

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const CONTROL_ESCAPES: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r' };

/**
 * Quotes `s` the way Go's strconv.Quote does (upstream renders field paths and YAML keys with it),
 * e.g. `a"b` → `"a\"b"`, a tab → `"\t"`, U+007F → `"\x7f"`. Lone surrogates become U+FFFD as Go's
 * JSON decoder would have produced. Pure; never throws.
 */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\ufffd';
    else if (PRINTABLE.test(ch)) out += ch;
    else if (CONTROL_ESCAPES[cp] !== undefined) out += CONTROL_ESCAPES[cp];
    else if (cp < 0x80) out += '\\x' + cp.toString(16).padStart(2, '0');
    else if (cp < 0x10000) out += '\\u' + cp.toString(16).padStart(4, '0');
    else out += '\\U' + cp.toString(16).padStart(8, '0');
  }
  return out + '"';
}

/** One strict-decoding finding: an unknown field or a duplicate field, by upstream field path. */
export interface StrictIssue {
  kind: 'unknown' | 'duplicate';
  path: string;
}

/**
 * Renders strict-decoding findings as upstream's single error message, e.g.
 * `strict decoding error: unknown field "spec.unknownField", duplicate field "spec.replicas"`.
 * `yamlDuplicates` (entries from parseYamlStrict) come first as one item
 * `yaml: unmarshal errors:\n  line 11: key "foo" already set in map`, as upstream's YAML check runs
 * before the JSON one. In fieldValidation=Warn mode upstream sends each item as its own warning
 * instead. Returns null when there is nothing to report.
 */
export function strictDecodingMessage(issues: readonly StrictIssue[], yamlDuplicates: readonly string[] = []): string | null {
  const parts: string[] = [];
  if (yamlDuplicates.length > 0) parts.push('yaml: unmarshal errors:\n  ' + yamlDuplicates.join('\n  '));
  for (const issue of issues) parts.push(`${issue.kind === 'unknown' ? 'unknown' : 'duplicate'} field ${goQuote(issue.path)}`);
  return parts.length === 0 ? null : 'strict decoding error: ' + parts.join(', ');
}
