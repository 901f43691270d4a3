import { DecodeError } from './decode-error.js';

/**
 * What PostgreSQL's jsonb (and Plinth's own recursive code) can hold, as
 * opposed to what Go's JSON decoder accepts:
 *
 * - A NUL character (`\u0000`) in a string or key: Go and etcd store it,
 *   jsonb cannot. Plinth refuses it with 400 rather than change the data.
 * - A lone UTF-16 surrogate (`"\ud800"`): Go's decoder replaces it with
 *   U+FFFD, and so does Plinth.
 * - Nesting: Go allows 10,000 levels; Plinth allows
 *   {@link MAX_STORABLE_DEPTH}, far beyond any real object, so that no
 *   recursive step (patches, pruning, validation) can exhaust the stack.
 */

/** The deepest nesting of objects and arrays a request body may have. */
export const MAX_STORABLE_DEPTH = 1000;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

function fixString(s: string, path: () => string): string {
  if (s.includes('\u0000')) throw new DecodeError(`${path()} contains a NUL character (\\u0000), which cannot be stored`);
  return LONE_SURROGATE.test(s) ? s.replace(LONE_SURROGATES, '\ufffd') : s;
}

function child(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

/**
 * Makes a decoded body storable, in place and without recursion: replaces
 * lone surrogates in strings and keys with U+FFFD; throws DecodeError
 * (beforeKind false) for a NUL character, naming the field, and for
 * nesting deeper than MAX_STORABLE_DEPTH. Returns the (possibly replaced)
 * value.
 */
export function makeStorable(value: unknown): unknown {
  if (typeof value === 'string') return fixString(value, () => 'the value');
  if (value === null || typeof value !== 'object') return value;
  const stack: Array<{ v: Record<string, unknown> | unknown[]; depth: number; path: string }> = [{ v: value as Record<string, unknown>, depth: 1, path: '' }];
  while (stack.length > 0) {
    const { v, depth, path } = stack.pop()!;
    if (depth > MAX_STORABLE_DEPTH) throw new DecodeError(`nesting deeper than ${MAX_STORABLE_DEPTH} levels is not supported`);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) visit(v, i, v[i], depth, path, stack);
    } else {
      for (const k of Object.keys(v)) {
        let key = k;
        if (k.includes('\u0000') || LONE_SURROGATE.test(k)) {
          key = fixString(k, () => `the key ${JSON.stringify(k)} in ${path || 'the object'}`);
          const x = v[k];
          delete v[k];
          v[key] = x;
        }
        visit(v, key, v[key], depth, path, stack);
      }
    }
  }
  return value;
}

function visit(
  parent: Record<string, unknown> | unknown[],
  key: string | number,
  x: unknown,
  depth: number,
  path: string,
  stack: Array<{ v: Record<string, unknown> | unknown[]; depth: number; path: string }>,
): void {
  if (typeof x === 'string') {
    const fixed = fixString(x, () => child(path, key));
    if (fixed !== x) (parent as Record<string | number, unknown>)[key] = fixed;
  } else if (x !== null && typeof x === 'object') {
    stack.push({ v: x as Record<string, unknown>, depth: depth + 1, path: child(path, key) });
  }
}
