/**
 * Source-level helpers for CEL expressions: a scanner that knows CEL's
 * string literals, used to route `matches()` to the RE2 implementation
 * (cel-js's built-in uses JavaScript regex syntax and a backtracking engine),
 * and an AST walk that finds the variables an expression reads.
 */

/** The name `matches` is rewritten to; same length, so error positions stay right. */
export const RE2_MATCHES = '__re2__';
/** The name the `has` macro is rewritten to (cel-js's own accepts only `has(a.b.c)` chains, not `has(a[0].b)`). */
export const HAS_MACRO = 'h_s';

function isIdentChar(ch: string | undefined): boolean {
  return ch !== undefined && /[A-Za-z0-9_]/.test(ch);
}

/**
 * Index just past the CEL string literal starting at `i` (an optional
 * r/b prefix, single, double or triple quotes, escapes unless raw), or -1
 * when none starts there; an unterminated literal ends at the line's end
 * (single quotes) or the source's. The one scanner of CEL string literals:
 * source rewrites use it to leave literals untouched. Pure.
 */
export function skipStringLiteral(src: string, i: number): number {
  let j = i;
  let raw = false;
  while (j < src.length && /[rRbB]/.test(src[j]) && j - i < 2) {
    if (src[j] === 'r' || src[j] === 'R') raw = true;
    j++;
  }
  const q = src[j];
  if (q !== '"' && q !== "'") return -1;
  if (j > i && isIdentChar(src[i - 1])) return -1;
  const triple = src.startsWith(q.repeat(3), j);
  const close = triple ? q.repeat(3) : q;
  j += close.length;
  while (j < src.length) {
    if (!raw && src[j] === '\\') {
      j += 2;
      continue;
    }
    if (src.startsWith(close, j)) return j + close.length;
    if (!triple && src[j] === '\n') return j;
    j++;
  }
  return j;
}

/**
 * Replaces calls of `matches` (method or global form, outside string
 * literals) by {@link RE2_MATCHES} and of the `has` macro by
 * {@link HAS_MACRO}. Pure; same length as the input.
 */
export function rewriteMatchesCalls(src: string): string {
  let out = '';
  let i = 0;
  while (i < src.length) {
    const ch = src[i];
    if (/[rRbB"']/.test(ch) && !isIdentChar(src[i - 1])) {
      const end = skipStringLiteral(src, i);
      if (end > 0) {
        out += src.slice(i, end);
        i = end;
        continue;
      }
    }
    if (src.startsWith('matches', i) && !isIdentChar(src[i - 1]) && !isIdentChar(src[i + 7])) {
      let k = i + 7;
      while (k < src.length && /\s/.test(src[k])) k++;
      if (src[k] === '(') {
        out += RE2_MATCHES;
        i += 7;
        continue;
      }
    }
    if (src.startsWith('has', i) && !isIdentChar(src[i - 1]) && src[i - 1] !== '.' && !isIdentChar(src[i + 3])) {
      let k = i + 3;
      while (k < src.length && /\s/.test(src[k])) k++;
      if (src[k] === '(') {
        out += HAS_MACRO;
        i += 3;
        continue;
      }
    }
    out += ch;
    i++;
  }
  return out;
}

interface AstLike {
  op?: unknown;
  args?: unknown;
}

/** Every identifier (`id` node) an AST reads, including comprehension variables. */
export function identifiersOf(ast: unknown): Set<string> {
  const found = new Set<string>();
  const seen = new Set<unknown>();
  const walk = (n: unknown): void => {
    if (n === null || typeof n !== 'object' || seen.has(n)) return;
    seen.add(n);
    if (Array.isArray(n)) {
      for (const x of n) walk(x);
      return;
    }
    const node = n as AstLike;
    if (node.op === 'id' && typeof node.args === 'string') found.add(node.args);
    if (node.args !== undefined) walk(node.args);
    for (const [k, v] of Object.entries(n)) {
      if (k !== 'args' && k !== 'input' && v && typeof v === 'object' && 'op' in (v as object)) walk(v);
    }
  };
  walk(ast);
  return found;
}
