/**
 * Name and key format checks as k8s.io/apimachinery has them
 * (pkg/util/validation and pkg/api/validate/content). Each check returns the
 * upstream error details, empty when the value is valid; callers wrap them in
 * FieldErrors. Lengths are Go `len(string)`, i.e. UTF-8 bytes.
 *
 * Upstream keeps two wordings of the length message: the older
 * util/validation helpers (DNS names, config keys) say "characters", the
 * newer content helpers (label keys and values) say "bytes". Both are kept.
 */

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_LABEL_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const LABEL_KEY_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_KEY_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${LABEL_KEY_FMT})?`;
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const CONFIG_MAP_KEY_FMT = '[-._a-zA-Z0-9]+';
const CONFIG_MAP_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";

const dns1123LabelRe = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const dns1123SubdomainRe = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const dns1035LabelRe = new RegExp(`^${DNS1035_LABEL_FMT}$`);
const labelKeyRe = new RegExp(`^${LABEL_KEY_FMT}$`);
const labelValueRe = new RegExp(`^${LABEL_VALUE_FMT}$`);
const configMapKeyRe = new RegExp(`^${CONFIG_MAP_KEY_FMT}$`);

/** DNS-1123 label limit (names of namespaces and other label-named kinds). */
export const DNS1123_LABEL_MAX_LENGTH = 63;
/** DNS-1123 subdomain limit (most object names, config keys). */
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
/** Label value and label-key name-part limit. */
export const LABEL_VALUE_MAX_LENGTH = 63;

/** Go's `len(s)`: the UTF-8 byte length of `s` (a lone surrogate counts as U+FFFD, 3 bytes). Never throws. */
export function byteLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}


function maxLenCharacters(limit: number): string {
  return `must be no more than ${limit} characters`;
}

function maxLenBytes(limit: number): string {
  return `must be no more than ${limit} bytes`;
}

/** Upstream RegexError: the message, examples and the regex used. */
function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  const shown = examples.map((e) => `'${e}', `).join(' or ');
  return `${msg} (e.g. ${shown}regex used for validation is '${fmt}')`;
}

/** DNS-1123 label check (util/validation.IsDNS1123Label). Returns details; empty when valid. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenCharacters(DNS1123_LABEL_MAX_LENGTH));
  if (!dns1123LabelRe.test(value)) {
    // A valid subdomain that is not a valid label can only be failing on dots.
    if (dns1123SubdomainRe.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

function checkSubdomain(value: string, maxLen: (limit: number) => string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLen(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!dns1123SubdomainRe.test(value)) errs.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

/** DNS-1123 subdomain check (util/validation.IsDNS1123Subdomain). Returns details; empty when valid. */
export function isDNS1123Subdomain(value: string): string[] {
  return checkSubdomain(value, maxLenCharacters);
}

/** DNS-1035 label check (util/validation.IsDNS1035Label), used for Service names. Returns details; empty when valid. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenCharacters(DNS1123_LABEL_MAX_LENGTH));
  if (!dns1035LabelRe.test(value)) errs.push(regexError(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, 'my-name', 'abc-123'));
  return errs;
}

/**
 * Qualified-name (label key) check (content.IsLabelKey): an optional
 * DNS-subdomain prefix and '/', then a name of at most 63 bytes.
 * Returns details; empty when valid.
 */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...checkSubdomain(prefix, maxLenBytes).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a valid label key ${regexError(LABEL_KEY_MSG, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (byteLength(name) > LABEL_VALUE_MAX_LENGTH) errs.push(`name part ${maxLenBytes(LABEL_VALUE_MAX_LENGTH)}`);
  if (!labelKeyRe.test(name)) errs.push(`name part ${regexError(LABEL_KEY_MSG, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

const CONDITION_REASON_FMT = '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?';
const CONDITION_REASON_MSG =
  "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'";
const conditionReasonRe = new RegExp(`^${CONDITION_REASON_FMT}$`);

/** metav1 Condition reason check (metav1validation.isValidConditionReason). Returns details; empty when valid. */
export function isValidConditionReason(value: string): string[] {
  return conditionReasonRe.test(value) ? [] : [regexError(CONDITION_REASON_MSG, CONDITION_REASON_FMT, 'my_name', 'MY_NAME', 'MyName', 'ReasonA,ReasonB', 'ReasonA:ReasonB')];
}

/** Label value check (content.IsLabelValue): empty, or at most 63 bytes of [-A-Za-z0-9_.] with alphanumeric ends. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenBytes(LABEL_VALUE_MAX_LENGTH));
  if (!labelValueRe.test(value)) errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

/** ConfigMap/Secret key check (util/validation.IsConfigMapKey). Returns details; empty when valid. */
export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenCharacters(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!configMapKeyRe.test(value)) errs.push(regexError(CONFIG_MAP_KEY_MSG, CONFIG_MAP_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  if (value === '.') errs.push("must not be '.'");
  else if (value === '..') errs.push("must not be '..'");
  else if (value.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/** Path-segment prefix check (content.IsPathSegmentPrefix): no '/' or '%'. Empty and long values pass, as upstream. */
export function isValidPathSegmentPrefix(name: string): string[] {
  const errs: string[] = [];
  for (const bad of ['/', '%']) if (name.includes(bad)) errs.push(`may not contain '${bad}'`);
  return errs;
}

/** Path-segment name check (content.IsPathSegmentName): not '.' or '..', and no '/' or '%'. */
export function isValidPathSegmentName(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  return isValidPathSegmentPrefix(name);
}

/** Which rule a kind's names follow. */
export type NameValidation = 'subdomain' | 'label' | 'path-segment';

/**
 * Upstream maskTrailingDash: a generateName prefix may end in '-', so the
 * last two characters are replaced by one 'a' before checking. (Upstream
 * drops two characters, not one; kept for identical results.)
 */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

/**
 * A kind's name check (NameIsDNSSubdomain / NameIsDNSLabel /
 * path.ValidatePathSegmentName). `prefix` is true for generateName values.
 * Returns details; empty when valid.
 */
export function validateName(rule: NameValidation, name: string, prefix: boolean): string[] {
  if (rule === 'path-segment') return prefix ? isValidPathSegmentPrefix(name) : isValidPathSegmentName(name);
  const value = prefix ? maskTrailingDash(name) : name;
  return rule === 'label' ? isDNS1123Label(value) : isDNS1123Subdomain(value);
}
