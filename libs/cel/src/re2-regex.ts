import { LRUCache } from 'lru-cache';
import { RE2JS, RE2JSException } from 're2js';

/**
 * Regular expressions with Go/RE2 syntax and semantics, as Kubernetes
 * evaluates them in OpenAPI `pattern`s and CEL `matches()`/`find()`/
 * `findAll()`. Every tenant-supplied pattern runs on re2js (a port of
 * RE2/J): matching is linear in the input whatever the pattern, so no
 * pattern can stall the event loop (`^(\pL+)+$` against a long
 * non-matching value answers as fast as `^a+$`). re2js parses RE2 syntax
 * itself (`(?i)`, `\A`, `\z`, `(?P<n>…)`, `[[:alpha:]]`, `\pL`, `\Q…\E`)
 * and rejects what RE2 rejects (backreferences, lookarounds) with Go's
 * messages. No process-wide V8 flag is involved.
 */

/** A pattern that is not valid RE2; `message` is Go's text without its `error parsing regexp: ` prefix. */
export class Re2SyntaxError extends Error {}

/** A compiled RE2 pattern. Matching never mutates it and is safe to share. */
export interface Re2Pattern {
  /** The pattern as given. */
  readonly source: string;
  /** True when `text` contains a match (unanchored, as Go's `MatchString`). */
  test(text: string): boolean;
  /** The leftmost match in `text`, or undefined when there is none (Go's `FindString`). */
  find(text: string): string | undefined;
  /** Successive non-overlapping matches; at most `limit` of them when `limit` ≥ 0 (Go's `FindAllString`). */
  findAll(text: string, limit: number): string[];
}

class CompiledRe2 implements Re2Pattern {
  constructor(
    readonly source: string,
    private readonly re: RE2JS,
  ) {}

  test(text: string): boolean {
    return this.re.test(text);
  }

  find(text: string): string | undefined {
    const m = this.re.matcher(text);
    return m.find() ? (m.group() ?? '') : undefined;
  }

  findAll(text: string, limit: number): string[] {
    const out: string[] = [];
    if (limit === 0) return out;
    const m = this.re.matcher(text);
    while (m.find()) {
      out.push(m.group() ?? '');
      if (limit > 0 && out.length >= limit) break;
    }
    return out;
  }
}

const cache = new LRUCache<string, Re2Pattern>({ max: 1000 });

/**
 * Compiles an RE2 pattern (cached, least recently used evicted first).
 * Throws Re2SyntaxError for patterns RE2 rejects (backreferences,
 * lookarounds, bad syntax, repeat counts above 1000).
 */
export function compileRe2(pattern: string): Re2Pattern {
  const hit = cache.get(pattern);
  if (hit) return hit;
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (err) {
    if (err instanceof RE2JSException) throw new Re2SyntaxError(err.message.replace(/^error parsing regexp: /, ''));
    throw err;
  }
  const compiled = new CompiledRe2(pattern, re);
  cache.set(pattern, compiled);
  return compiled;
}

/** True when `text` contains a match of the RE2 `pattern` (unanchored, as Go's MatchString). */
export function re2Test(pattern: string, text: string): boolean {
  return compileRe2(pattern).test(text);
}
