/**
 * MutatingAdmissionPolicy expressions build objects with CEL's message
 * construction syntax (`Object{spec: Object.spec{replicas: 3}}`,
 * `JSONPatch{op: "add", path: "/x", value: 1}`), which the CEL
 * implementation does not parse. This rewrites every construction into a
 * map literal with `dyn`-wrapped values (`{"spec": dyn({"replicas": dyn(3)})}`)
 * — the same JSON shape the typed object would serialize to — leaving
 * string literals untouched. Pure.
 */

import { skipStringLiteral } from '@plinth/cel';

const IDENT_START = /[A-Za-z_]/;
const IDENT = /[A-Za-z0-9_]/;


function skipSpace(src: string, i: number): number {
  while (i < src.length && /\s/.test(src[i])) i++;
  return i;
}

/** Reads `A.b.c` from `i`; returns its end, or -1. */
function readChain(src: string, i: number): number {
  let j = i;
  for (;;) {
    if (!IDENT_START.test(src[j] ?? '')) return -1;
    while (j < src.length && IDENT.test(src[j])) j++;
    const k = skipSpace(src, j);
    if (src[k] !== '.' || !IDENT_START.test(src[skipSpace(src, k + 1)] ?? '')) return j;
    j = skipSpace(src, k + 1);
  }
}

class Rewriter {
  i = 0;
  constructor(private readonly src: string) {}

  /** Copies (rewriting) until a top-level `,` or `}` (not consumed) when `stopAtField`, else to the end. */
  scan(stopAtField: boolean): string {
    const src = this.src;
    let out = '';
    let depth = 0;
    while (this.i < src.length) {
      const ch = src[this.i];
      const prev = src[this.i - 1];
      if (/[rRbB"']/.test(ch) && !(prev && IDENT.test(prev))) {
        const end = skipStringLiteral(src, this.i);
        if (end > 0) {
          out += src.slice(this.i, end);
          this.i = end;
          continue;
        }
      }
      if (stopAtField && depth === 0 && (ch === ',' || ch === '}')) return out;
      if (IDENT_START.test(ch) && !(prev && (IDENT.test(prev) || prev === '.'))) {
        const end = readChain(src, this.i);
        const brace = skipSpace(src, end);
        if (src[brace] === '{') {
          this.i = brace + 1;
          out += this.construction();
          continue;
        }
        out += src.slice(this.i, end);
        this.i = end;
        continue;
      }
      if (ch === '(' || ch === '[' || ch === '{') depth++;
      if (ch === ')' || ch === ']' || ch === '}') depth--;
      out += ch;
      this.i++;
    }
    return out;
  }

  /** After `Type{`: the fields as a map literal, through the closing brace. */
  private construction(): string {
    const src = this.src;
    const fields: string[] = [];
    for (;;) {
      this.i = skipSpace(src, this.i);
      if (src[this.i] === '}' || this.i >= src.length) {
        this.i++;
        return `{${fields.join(', ')}}`;
      }
      const start = this.i;
      while (this.i < src.length && IDENT.test(src[this.i])) this.i++;
      const name = src.slice(start, this.i);
      this.i = skipSpace(src, this.i);
      if (!IDENT_START.test(name.charAt(0)) || src[this.i] !== ':') throw new Error(`unexpected ${JSON.stringify(src[this.i] ?? 'end of input')} in object construction`);
      this.i++;
      const value = this.scan(true).trim();
      fields.push(`${JSON.stringify(name)}: dyn(${value})`);
      if (src[this.i] === ',') this.i++;
    }
  }
}

/** `expression` with every message construction turned into a map literal. Throws Error on a malformed construction. */
export function rewriteObjectConstruction(expression: string): string {
  return new Rewriter(expression).scan(false);
}
