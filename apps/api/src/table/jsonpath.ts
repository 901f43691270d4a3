import { isPlainObject } from '@plinth/apimachinery';

/**
 * The JSONPath dialect of client-go's util/jsonpath as CRD printer columns
 * use it: `.a.b`, `['a.b']`, `[0]`, `[-1]`, `[1:3]`, `[*]`, `..a`, and
 * filters `[?(@.type=="Ready")]` with ==, !=, <, <=, >, >= or bare
 * existence. Evaluation never throws; missing keys yield no results.
 */

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'recursive'; name: string }
  | { kind: 'wildcard' }
  | { kind: 'index'; index: number }
  | { kind: 'slice'; start?: number; end?: number }
  | { kind: 'filter'; left: string[]; op?: string; right?: unknown; rightPath?: string[] };

/** A parse error of a JSONPath expression. */
export class JsonPathError extends Error {}

function parseLiteral(text: string): unknown {
  const t = text.trim();
  if ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'"))) return t.slice(1, -1);
  if (t === 'true' || t === 'false') return t === 'true';
  if (t === 'nil' || t === 'null') return null;
  const n = Number(t);
  if (!Number.isNaN(n) && t !== '') return n;
  throw new JsonPathError(`unrecognized filter value ${t}`);
}

function parseRelative(path: string): string[] {
  return path.replace(/^@\.?/, '').split('.').filter((s) => s.length > 0);
}

function parseFilter(body: string): Step {
  const m = /^\s*(@[\w.\-/]*)\s*(==|!=|<=|>=|<|>)\s*(.+?)\s*$/.exec(body);
  if (!m) return { kind: 'filter', left: parseRelative(body.trim()) };
  const right = m[3].trim();
  if (right.startsWith('@')) return { kind: 'filter', left: parseRelative(m[1]), op: m[2], rightPath: parseRelative(right) };
  return { kind: 'filter', left: parseRelative(m[1]), op: m[2], right: parseLiteral(right) };
}

function parseBracket(body: string): Step {
  const b = body.trim();
  if (b === '*') return { kind: 'wildcard' };
  if (b.startsWith('?(') && b.endsWith(')')) return parseFilter(b.slice(2, -1));
  if ((b.startsWith("'") && b.endsWith("'")) || (b.startsWith('"') && b.endsWith('"'))) return { kind: 'field', name: b.slice(1, -1) };
  if (b.includes(':')) {
    const [s, e] = b.split(':');
    return { kind: 'slice', start: s.trim() ? Number(s) : undefined, end: e?.trim() ? Number(e) : undefined };
  }
  if (/^-?\d+$/.test(b)) return { kind: 'index', index: Number(b) };
  throw new JsonPathError(`invalid array index ${b}`);
}

/** Parses `{.a.b}` or `.a.b`; throws JsonPathError. */
export function parseJsonPath(expr: string): Step[] {
  let src = expr.trim();
  if (src.startsWith('{') && src.endsWith('}')) src = src.slice(1, -1).trim();
  if (src.startsWith('$')) src = src.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < src.length) {
    const ch = src[i];
    if (ch === '.') {
      const recursive = src[i + 1] === '.';
      i += recursive ? 2 : 1;
      const m = /^[^.[\]]*/.exec(src.slice(i))!;
      i += m[0].length;
      if (m[0] === '*') steps.push({ kind: 'wildcard' });
      else if (m[0]) steps.push(recursive ? { kind: 'recursive', name: m[0] } : { kind: 'field', name: m[0] });
    } else if (ch === '[') {
      let depth = 0;
      let j = i;
      for (; j < src.length; j++) {
        if (src[j] === '[') depth++;
        else if (src[j] === ']' && --depth === 0) break;
      }
      if (j >= src.length) throw new JsonPathError('unterminated array');
      steps.push(parseBracket(src.slice(i + 1, j)));
      i = j + 1;
    } else {
      throw new JsonPathError(`unrecognized character in action: ${JSON.stringify(ch)}`);
    }
  }
  return steps;
}

function get(v: unknown, path: string[]): unknown {
  let cur = v;
  for (const p of path) {
    if (!isPlainObject(cur) || !Object.hasOwn(cur, p)) return undefined;
    cur = cur[p];
  }
  return cur;
}

function compare(a: unknown, op: string, b: unknown): boolean {
  switch (op) {
    case '==':
      return a === b || (typeof a === 'number' && typeof b === 'number' && a === b);
    case '!=':
      return a !== b;
    case '<':
      return (a as number) < (b as number);
    case '<=':
      return (a as number) <= (b as number);
    case '>':
      return (a as number) > (b as number);
    case '>=':
      return (a as number) >= (b as number);
    default:
      return false;
  }
}

function collectRecursive(v: unknown, name: string, out: unknown[]): void {
  if (isPlainObject(v)) {
    if (Object.hasOwn(v, name)) out.push(v[name]);
    for (const x of Object.values(v)) collectRecursive(x, name, out);
  } else if (Array.isArray(v)) for (const x of v) collectRecursive(x, name, out);
}

function applyStep(values: unknown[], step: Step): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    switch (step.kind) {
      case 'field':
        if (isPlainObject(v) && Object.hasOwn(v, step.name)) out.push(v[step.name]);
        break;
      case 'recursive':
        collectRecursive(v, step.name, out);
        break;
      case 'wildcard':
        if (Array.isArray(v)) out.push(...v);
        else if (isPlainObject(v)) out.push(...Object.values(v));
        break;
      case 'index':
        if (Array.isArray(v)) {
          const i = step.index < 0 ? v.length + step.index : step.index;
          if (i >= 0 && i < v.length) out.push(v[i]);
        }
        break;
      case 'slice':
        if (Array.isArray(v)) out.push(...v.slice(step.start ?? 0, step.end ?? v.length));
        break;
      case 'filter':
        if (Array.isArray(v)) {
          for (const item of v) {
            const left = get(item, step.left);
            if (step.op === undefined ? left !== undefined : compare(left, step.op, step.rightPath ? get(item, step.rightPath) : step.right)) out.push(item);
          }
        }
        break;
    }
  }
  return out;
}

/** Every value `steps` select from `obj`, in document order. */
export function evaluateJsonPath(steps: Step[], obj: unknown): unknown[] {
  return steps.reduce<unknown[]>((values, step) => applyStep(values, step), [obj]);
}

/** How client-go prints one result: strings raw, other values as JSON. */
export function printJsonPathValue(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

export type { Step as JsonPathStep };
