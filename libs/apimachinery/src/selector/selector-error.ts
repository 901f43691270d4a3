/**
 * The error the selector parsers throw, and the upstream texts it carries.
 *
 * Texts follow k8s.io/apimachinery v0.36 (Kubernetes 1.36): label keys are
 * "a valid label key …" and lengths are counted in bytes. Kubernetes 1.34 and
 * older said "a qualified name …" and "characters"; only the constants below
 * would change to target them.
 */
import { goQuote } from '../text/go-strings.js';

/**
 * Thrown by the label and field selector parsers and by the metav1 converter.
 * `message` is kube-apiserver's error text verbatim, ready for a 400 Status.
 */
export class SelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SelectorError';
  }
}

const LABEL_KEY_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_KEY_RE = new RegExp(`^${LABEL_KEY_FMT}$`);
const LABEL_KEY_ERR = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${LABEL_KEY_FMT})?`;
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);
const LABEL_VALUE_ERR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1123_SUBDOMAIN_ERR =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const NAME_MAX_BYTES = 63;
const SUBDOMAIN_MAX_BYTES = 253;

function maxLenError(limit: number): string {
  return `must be no more than ${limit} bytes`;
}

/** Go's RegexError leaves a doubled space before each " or "; clients may match on it, so it is kept. */
function regexError(msg: string, re: string, ...examples: string[]): string {
  const shown = examples.map((e) => `'${e}', `).join(' or ');
  return `${msg} (e.g. ${shown}regex used for validation is '${re}')`;
}

/** Go measures strings in UTF-8 bytes, so a 32-character CJK name is already too long. */
function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > SUBDOMAIN_MAX_BYTES) errs.push(maxLenError(SUBDOMAIN_MAX_BYTES));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) errs.push(regexError(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

/**
 * Validates a label key (`[prefix/]name`) as content.IsLabelKey does.
 * Returns the upstream messages in upstream order; an empty array when valid.
 */
export function labelKeyErrors(key: string): string[] {
  const parts = key.split('/');
  if (parts.length > 2) {
    return [
      `a valid label key ${regexError(LABEL_KEY_ERR, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  const errs: string[] = [];
  const name = parts.length === 2 ? parts[1] : parts[0];
  if (parts.length === 2) {
    const prefix = parts[0];
    if (prefix === '') errs.push('prefix part must be non-empty');
    else errs.push(...dns1123SubdomainErrors(prefix).map((m) => `prefix part ${m}`));
  }
  if (name === '') errs.push('name part must be non-empty');
  else if (byteLength(name) > NAME_MAX_BYTES) errs.push(`name part ${maxLenError(NAME_MAX_BYTES)}`);
  if (!LABEL_KEY_RE.test(name)) errs.push(`name part ${regexError(LABEL_KEY_ERR, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

/**
 * Validates a label value (may be empty) as content.IsLabelValue does.
 * Returns the upstream messages; an empty array when valid.
 */
export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > NAME_MAX_BYTES) errs.push(maxLenError(NAME_MAX_BYTES));
  if (!LABEL_VALUE_RE.test(value)) errs.push(regexError(LABEL_VALUE_ERR, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}


/** JSON as Go's encoding/json writes it, which escapes HTML characters and line separators. */
function goJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Renders a field.Invalid error as Go's `(*field.Error).Error()` does:
 * `path: Invalid value: <value>: detail`. Strings are `%q`-quoted, slices are
 * JSON, and `null` stands for a nil slice.
 */
export function invalidValueText(path: string, value: string | readonly string[] | null, detail: string): string {
  const shown = typeof value === 'string' ? goQuote(value) : goJson(value);
  return `${path}: Invalid value: ${shown}: ${detail}`;
}

/**
 * Joins error texts as an apimachinery Aggregate built from a field.ErrorList:
 * duplicates dropped, one text alone as is, several as `[a, b]`.
 * Returns '' for an empty list.
 */
export function aggregateText(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0] : unique.length === 0 ? '' : `[${unique.join(', ')}]`;
}
