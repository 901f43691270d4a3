import type { Environment } from '@marcbachmann/cel-js';
import { RE2_MATCHES } from './cel-source.js';
import { compileRe2, type Re2Pattern, Re2SyntaxError } from './re2-regex.js';

/**
 * cel-go's strings extension (version 2, as Kubernetes 1.29+ enables it)
 * where cel-js lacks it — `charAt`, `replace`, `format`, `quote`,
 * `reverse` — plus the RE2-backed `matches` and Kubernetes' regex library
 * (`find`, `findAll`). Strings are indexed by code point, as in CEL.
 */

function codePoints(s: string): string[] {
  return [...s];
}

function re2(pattern: string): Re2Pattern {
  try {
    return compileRe2(pattern);
  } catch (err) {
    if (err instanceof Re2SyntaxError) throw new Error(`invalid regex: ${err.message}`);
    throw err;
  }
}

function findAll(s: string, pattern: string, limit: bigint): string[] {
  if (limit === 0n) return [];
  return re2(pattern).findAll(s, limit < 0n ? -1 : Number(limit > 1_000_000n ? 1_000_000n : limit));
}

function celString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isInteger(v) ? v.toFixed(0) : String(v);
  if (typeof v === 'boolean' || v === null) return String(v);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (Array.isArray(v)) return `[${v.map(celString).join(', ')}]`;
  if (v instanceof Date) return v.toISOString().replace('.000Z', 'Z');
  if (typeof v === 'object') return `{${Object.entries(v as object).map(([k, x]) => `${celString(k)}: ${celString(x)}`).join(', ')}}`;
  return String(v);
}

function formatNumber(verb: string, precision: number | undefined, v: unknown): string {
  const n = typeof v === 'bigint' ? Number(v) : (v as number);
  switch (verb) {
    case 'd':
      if (typeof v !== 'bigint' && !Number.isInteger(n)) throw new Error('error during formatting: decimal clause can only be used on integers');
      return String(v);
    case 'f':
      return n.toFixed(precision ?? 6);
    case 'e':
      return n.toExponential(precision ?? 6).replace(/e([+-])(\d)$/, 'e$10$2');
    case 'x':
    case 'X': {
      const text = typeof v === 'string' ? Buffer.from(v).toString('hex') : typeof v === 'bigint' ? v.toString(16) : n.toString(16);
      return verb === 'X' ? text.toUpperCase() : text;
    }
    case 'o':
      return typeof v === 'bigint' ? v.toString(8) : n.toString(8);
    case 'b':
      return typeof v === 'bigint' ? v.toString(2) : typeof v === 'boolean' ? String(v) : n.toString(2);
    default:
      throw new Error(`error during formatting: unrecognized formatting clause "${verb}"`);
  }
}

/** `"%s is %d".format([a, b])` with cel-go's verbs (%s %d %f %e %x %X %o %b %%). */
export function celFormat(template: string, args: unknown[]): string {
  let out = '';
  let argIndex = 0;
  for (let i = 0; i < template.length; i++) {
    const ch = template[i];
    if (ch !== '%') {
      out += ch;
      continue;
    }
    if (template[i + 1] === '%') {
      out += '%';
      i++;
      continue;
    }
    const m = /^(?:\.(\d+))?([a-zA-Z])/.exec(template.slice(i + 1));
    if (!m) throw new Error('error during formatting: could not parse formatting clause');
    if (argIndex >= args.length) throw new Error(`error during formatting: index ${argIndex} out of range`);
    const arg = args[argIndex++];
    out += m[2] === 's' ? celString(arg) : formatNumber(m[2], m[1] === undefined ? undefined : Number(m[1]), arg);
    i += m[0].length;
  }
  return out;
}

function quote(s: string): string {
  return JSON.stringify(s).replace(/\\u0007/g, '\\a').replace(/\\u000b/g, '\\v');
}

/** Registers the string functions on `env`. */
export function registerStringsLibrary(env: Environment): void {
  env.registerFunction('string.charAt(int): string', (s: string, i: bigint) => {
    const cps = codePoints(s);
    if (i < 0n || i > BigInt(cps.length)) throw new Error(`index out of range: ${i}`);
    return cps[Number(i)] ?? '';
  });
  env.registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) => s.split(a).join(b));
  env.registerFunction('string.replace(string, string, int): string', (s: string, a: string, b: string, n: bigint) => {
    if (n < 0n) return s.split(a).join(b);
    let out = s;
    let from = 0;
    for (let k = 0n; k < n; k++) {
      const at = out.indexOf(a, from);
      if (at < 0) break;
      out = out.slice(0, at) + b + out.slice(at + a.length);
      from = at + b.length + (a.length === 0 ? 1 : 0);
    }
    return out;
  });
  env.registerFunction('string.format(list): string', (s: string, args: unknown[]) => celFormat(s, args));
  env.registerFunction('string.reverse(): string', (s: string) => codePoints(s).reverse().join(''));
  class StringsNamespace {}
  env.registerType('StringsNamespace', StringsNamespace);
  env.registerConstant('strings', 'StringsNamespace', new StringsNamespace());
  env.registerFunction('StringsNamespace.quote(string): string', (_ns: unknown, s: string) => quote(s));
  env.registerFunction(`string.${RE2_MATCHES}(string): bool`, (s: string, p: string) => re2(p).test(s));
  env.registerFunction(`${RE2_MATCHES}(string, string): bool`, (s: string, p: string) => re2(p).test(s));
  env.registerFunction('string.find(string): string', (s: string, p: string) => re2(p).find(s) ?? '');
  env.registerFunction('string.findAll(string): list<string>', (s: string, p: string) => findAll(s, p, -1n));
  env.registerFunction('string.findAll(string, int): list<string>', (s: string, p: string, n: bigint) => findAll(s, p, n));
}
