import { goQuote } from '../text/go-strings.js';

/** Go's strconv.Quote, as decode errors render keys and paths (one implementation: text/go-strings.ts). */
export { goQuote };

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
