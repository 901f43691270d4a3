import { LRUCache } from 'lru-cache';
import { setFlagsFromString } from 'node:v8';

/**
 * Regular expressions with Go/RE2 syntax, as Kubernetes evaluates them in
 * OpenAPI `pattern`s and CEL `matches()`/`find()`: RE2 is linear-time, so a
 * pattern from a CRD can never hang the server. V8's experimental linear
 * engine (the `l` flag) gives the same guarantee for the RE2 subset it can
 * run; the translation below maps RE2-only syntax (`(?i)`, `(?i:…)`, `\A`,
 * `\z`, `(?P<n>…)`, `[[:alpha:]]`, `\pL`, `\Q…\E`) onto JS syntax.
 * Case-insensitivity is expanded into character classes because the linear
 * engine refuses the `i` flag.
 */

let linearEngine = false;
try {
  setFlagsFromString('--enable-experimental-regexp-engine');
  linearEngine = new RegExp('a', 'l').flags.includes('l');
} catch {
  linearEngine = false;
}

/** A pattern that is not valid RE2 (message in Go's regexp wording where it matters). */
export class Re2SyntaxError extends Error {}

const POSIX_CLASSES: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

function escapeLiteral(ch: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(ch) ? `\\${ch}` : ch;
}

function foldChar(ch: string, insideClass: boolean): string {
  const lo = ch.toLowerCase();
  const up = ch.toUpperCase();
  if (lo === up || lo.length !== 1 || up.length !== 1) return ch;
  return insideClass ? `${lo}${up}` : `[${lo}${up}]`;
}

/** Translation state: the output so far and whether case folding is active. */
interface Scan {
  src: string;
  i: number;
  out: string;
  unicode: boolean;
  named: number;
}

function readClass(s: Scan, fold: boolean): void {
  // s.i points at '['
  let body = '';
  s.i++;
  if (s.src[s.i] === '^') {
    body += '^';
    s.i++;
  }
  if (s.src[s.i] === ']') {
    body += '\\]';
    s.i++;
  }
  while (s.i < s.src.length && s.src[s.i] !== ']') {
    const ch = s.src[s.i];
    if (ch === '[' && s.src[s.i + 1] === ':') {
      const end = s.src.indexOf(':]', s.i + 2);
      if (end < 0) throw new Re2SyntaxError(`missing closing ]: \`${s.src.slice(s.i)}\``);
      const name = s.src.slice(s.i + 2, end);
      const cls = POSIX_CLASSES[name];
      if (!cls) throw new Re2SyntaxError(`invalid character class range: \`[:${name}:]\``);
      body += cls;
      s.i = end + 2;
      continue;
    }
    if (ch === '\\') {
      body += translateEscape(s, true);
      continue;
    }
    if (ch === '[') body += '\\[';
    else if (ch === '/') body += '\\/';
    else if (fold && /[a-zA-Z]/.test(ch) && s.src[s.i + 1] === '-' && /[a-zA-Z]/.test(s.src[s.i + 2] ?? '')) {
      const a = ch;
      const b = s.src[s.i + 2];
      body += `${a.toLowerCase()}-${b.toLowerCase()}${a.toUpperCase()}-${b.toUpperCase()}`;
      s.i += 3;
      continue;
    } else body += fold ? foldChar(ch, true) : ch;
    s.i++;
  }
  if (s.i >= s.src.length) throw new Re2SyntaxError(`missing closing ]: \`${s.src.slice(s.src.lastIndexOf('['))}\``);
  s.i++;
  s.out += `[${body}]`;
}

/** Translates one escape starting at s.i (a backslash); returns the JS text. */
function translateEscape(s: Scan, insideClass: boolean): string {
  const next = s.src[s.i + 1];
  if (next === undefined) throw new Re2SyntaxError('trailing backslash at end of expression: ``');
  s.i += 2;
  switch (next) {
    case 'A':
      return insideClass ? 'A' : '^';
    case 'z':
      return insideClass ? 'z' : '$';
    case 'Q': {
      const end = s.src.indexOf('\\E', s.i);
      const lit = s.src.slice(s.i, end < 0 ? undefined : end);
      s.i = end < 0 ? s.src.length : end + 2;
      return [...lit].map(escapeLiteral).join('');
    }
    case 'p':
    case 'P': {
      s.unicode = true;
      if (s.src[s.i] === '{') {
        const end = s.src.indexOf('}', s.i);
        if (end < 0) throw new Re2SyntaxError(`invalid character class range: \`\\${next}${s.src.slice(s.i)}\``);
        const name = s.src.slice(s.i + 1, end);
        s.i = end + 1;
        return `\\${next}{${name.startsWith('^') ? name.slice(1) : name}}`;
      }
      const name = s.src[s.i++];
      return `\\${next}{${name}}`;
    }
    case 'x':
      if (s.src[s.i] === '{') {
        const end = s.src.indexOf('}', s.i);
        const hex = s.src.slice(s.i + 1, end);
        s.i = end + 1;
        const cp = parseInt(hex, 16);
        return cp <= 0xffff ? `\\u${cp.toString(16).padStart(4, '0')}` : (((s.unicode = true), `\\u{${hex}}`));
      }
      return `\\x${s.src.slice(s.i, (s.i += 2))}`;
    case 'C':
      return insideClass ? 'C' : '[\\s\\S]';
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
      throw new Re2SyntaxError(`invalid escape sequence: \`\\${next}\``);
    case '/':
      return '\\/';
    default:
      return `\\${next}`;
  }
}

/** Parses a `(?flags)` or `(?flags:` group at s.i; returns undefined when the group is not a flag group. */
function readFlags(s: Scan): { flags: string; scoped: boolean } | undefined {
  const m = /^\(\?([imsU-]*)([:)])/.exec(s.src.slice(s.i));
  if (!m) return undefined;
  s.i += m[0].length;
  if (m[1].includes('U')) throw new Re2SyntaxError('ungreedy mode (?U) is not supported');
  return { flags: m[1], scoped: m[2] === ':' };
}

function translate(src: string): { source: string; flags: string } {
  const s: Scan = { src, i: 0, out: '', unicode: false, named: 0 };
  let fold = false;
  let dotAll = false;
  const stack: Array<{ fold: boolean; dotAll: boolean }> = [];
  while (s.i < src.length) {
    const ch = src[s.i];
    if (ch === '\\') {
      const esc = translateEscape(s, false);
      s.out += fold && esc.length === 2 && /[a-zA-Z]/.test(esc[1]) && /[^dDwWsSbBnrtfv]/.test(esc[1]) ? foldChar(esc[1], false) : esc;
    } else if (ch === '[') readClass(s, fold);
    else if (ch === '(') {
      const f = readFlags(s);
      if (f) {
        const on = f.flags.split('-')[0];
        const off = f.flags.split('-')[1] ?? '';
        const next: { fold: boolean; dotAll: boolean } = { fold: (fold || on.includes('i')) && !off.includes('i'), dotAll: (dotAll || on.includes('s')) && !off.includes('s') };
        if (f.scoped) {
          stack.push({ fold, dotAll });
          s.out += '(?:';
        }
        fold = next.fold;
        dotAll = next.dotAll;
        continue;
      }
      if (src.startsWith('(?P<', s.i)) {
        stack.push({ fold, dotAll });
        s.out += '(?<';
        s.i += 4;
      } else if (src.startsWith('(?=', s.i) || src.startsWith('(?!', s.i) || src.startsWith('(?<=', s.i) || src.startsWith('(?<!', s.i)) {
        throw new Re2SyntaxError(`invalid or unsupported Perl syntax: \`${src.slice(s.i, s.i + 3)}\``);
      } else {
        stack.push({ fold, dotAll });
        s.out += '(';
        s.i++;
      }
      continue;
    } else if (ch === ')') {
      const prev = stack.pop();
      if (!prev) throw new Re2SyntaxError(`unexpected ): \`${src}\``);
      fold = prev.fold;
      dotAll = prev.dotAll;
      s.out += ')';
      s.i++;
    } else if (ch === '.') {
      s.out += dotAll ? '[\\s\\S]' : '.';
      s.i++;
    } else if (ch === '/') {
      s.out += '\\/';
      s.i++;
    } else {
      s.out += fold ? foldChar(ch, false) : ch;
      s.i++;
    }
  }
  if (stack.length > 0) throw new Re2SyntaxError(`missing closing ): \`${src}\``);
  return { source: s.out, flags: s.unicode ? 'u' : '' };
}

/** Compiled patterns; the least recently used go first. */
const cache = new LRUCache<string, RegExp>({ max: 1000 });

/**
 * Compiles an RE2 pattern into a JS RegExp (cached). Uses the linear-time
 * engine when V8 can run the pattern there; otherwise (Unicode classes,
 * counted repetitions over V8's linear limit) the backtracking engine.
 * Throws Re2SyntaxError for patterns RE2 rejects (backreferences,
 * lookarounds) or that cannot be translated.
 */
export function compileRe2(pattern: string): RegExp {
  const hit = cache.get(pattern);
  if (hit) return hit;
  const { source, flags } = translate(pattern);
  let re: RegExp;
  try {
    re = linearEngine && !flags.includes('u') ? new RegExp(source, `${flags}l`) : new RegExp(source, flags);
  } catch {
    try {
      re = new RegExp(source, flags);
    } catch (err) {
      throw new Re2SyntaxError((err as Error).message.replace(/^Invalid regular expression: /, ''));
    }
  }
  cache.set(pattern, re);
  return re;
}

/** True when `text` contains a match of the RE2 `pattern` (unanchored, as Go's MatchString). */
export function re2Test(pattern: string, text: string): boolean {
  const re = compileRe2(pattern);
  re.lastIndex = 0;
  return re.test(text);
}

/** Whether V8's linear-time engine is in use (for diagnostics and docs). */
export function re2LinearEngineEnabled(): boolean {
  return linearEngine;
}
