/**
 * Kubernetes field selectors (`?fieldSelector=`), as
 * k8s.io/apimachinery/pkg/fields parses and matches them.
 */
import { SelectorError } from './selector-error.js';

/** One `field=value` or `field!=value` term; `==` is stored as `=`. */
export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

/** An AND of terms, in upstream's order (terms sorted as raw text); none matches everything. */
export interface FieldSelector {
  requirements: FieldRequirement[];
}

/** Upstream tries `!=` and `==` before `=` at each position so `a==b` is not read as `a` = `=b`. */
const TERM_OPERATORS = ['!=', '==', '='] as const;

/** Splits on commas not preceded by a backslash; the escapes stay in the terms. */
function splitTerms(selector: string): string[] {
  if (selector === '') return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

/** The field is taken literally up to the first operator; it has no escapes. */
function splitTerm(term: string): { field: string; op: string; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of TERM_OPERATORS) {
      if (term.startsWith(op, i)) return { field: term.slice(0, i), op, rhs: term.slice(i + op.length) };
    }
  }
  return undefined;
}

/** Undoes `\\`, `\,` and `\=`; any other escape, a trailing `\`, or a bare `,`/`=` is an error. */
function unescapeValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=') throw new SelectorError(`invalid field selector: invalid escape sequence: \\${c}`);
      out += c;
      inSlash = false;
    } else if (c === '\\') inSlash = true;
    else if (c === ',' || c === '=') {
      // Go prints the rune with %v, i.e. as its code point number.
      throw new SelectorError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else out += c;
  }
  if (inSlash) throw new SelectorError('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** Go compares strings bytewise; for UTF-8 that is code point order, which UTF-16 order is not. */
function compareCodePoints(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i].codePointAt(0) ?? 0) - (y[i].codePointAt(0) ?? 0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/**
 * Parses a `fieldSelector` query string: comma-separated `field=value`,
 * `field==value` or `field!=value`, with `\,`, `\=` and `\\` escapes in
 * values. Whitespace is kept verbatim. '' matches everything; empty terms,
 * and terms whose field and value are both empty, are dropped.
 * Throws SelectorError with upstream's message (checking terms in sorted order).
 */
export function parseFieldSelector(s: string): FieldSelector {
  const requirements: FieldRequirement[] = [];
  for (const term of splitTerms(s).sort(compareCodePoints)) {
    if (term === '') continue;
    const parts = splitTerm(term);
    if (parts === undefined) throw new SelectorError(`invalid selector: '${s}'; can't understand '${term}'`);
    const value = unescapeValue(parts.rhs);
    if (parts.field === '' && value === '') continue;
    requirements.push({ field: parts.field, operator: parts.op === '!=' ? '!=' : '=', value });
  }
  return { requirements };
}

/**
 * True when every term holds for `fields`; a field missing from the map
 * compares as ''. Does not mutate its inputs.
 */
export function matchesFields(sel: FieldSelector, fields: Record<string, string>): boolean {
  return sel.requirements.every((r) => {
    const actual = Object.hasOwn(fields, r.field) ? fields[r.field] : '';
    return r.operator === '=' ? actual === r.value : actual !== r.value;
  });
}

/**
 * The distinct fields the selector uses, in requirement order, so a caller
 * can reject unsupported ones (`field label not supported: x`). [] if none.
 */
export function fieldSelectorFields(sel: FieldSelector): string[] {
  return [...new Set(sel.requirements.map((r) => r.field))];
}

/**
 * The canonical string form, as upstream's Selector.String(): terms joined
 * by ',' with `\`, `,` and `=` escaped in values; re-parses to a selector matching the same objects.
 */
export function renderFieldSelector(sel: FieldSelector): string {
  return sel.requirements.map((r) => `${r.field}${r.operator}${r.value.replace(/[\\,=]/g, (c) => `\\${c}`)}`).join(',');
}
