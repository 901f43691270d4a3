import { type CelType, listOf, simple } from './cel-cost-size.js';
import { HAS_MACRO, RE2_MATCHES } from './cel-source.js';

/**
 * Turns a cel-js AST into the expression tree cel-go's cost estimator
 * walks: macros expanded into comprehensions exactly as cel-go's parser
 * expands them (all, exists, exists_one, map, filter, cel.bind), `has()`
 * as a presence test, operators as calls, and every node typed, with the
 * overloads cel-go's checker would pick for it (the estimator charges by
 * overload: `_+_` on strings traverses them, on ints it does not).
 * Types come from the declared variables; what cannot be known is `dyn`,
 * which, as in cel-go, selects every overload that could apply. Pure.
 */

interface AstNode {
  op: string;
  args: unknown;
}

/** A node of the lowered tree; its identity keys the estimator's tables. */
export type Expr = { readonly t: CelType } & (
  | { readonly k: 'lit'; readonly v: unknown }
  | { readonly k: 'ident'; readonly name: string }
  | { readonly k: 'select'; readonly operand: Expr; readonly field: string; readonly testOnly: boolean }
  | { readonly k: 'call'; readonly fn: string; readonly target?: Expr; readonly args: Expr[]; readonly overloads: string[] }
  | { readonly k: 'list'; readonly elems: Expr[] }
  | { readonly k: 'map'; readonly entries: Array<[Expr, Expr]> }
  | {
      readonly k: 'comp';
      readonly range: Expr;
      readonly iterVar: string;
      readonly accuVar: string;
      readonly init: Expr;
      readonly cond: Expr;
      readonly step: Expr;
      readonly result: Expr;
    }
);

/** cel-go's accumulator variable of macro comprehensions. */
export const ACCUMULATOR = '@result';

const DYN = simple('dyn');
const BOOL = simple('bool');
const INT = simple('int');
const STRING = simple('string');
const NAMESPACES = new Set(['cel', 'strings', 'sets', 'optional', 'format', 'math', 'lists', 'base64', 'ip', 'jsonpatch']);
const BOOL_FNS = new Set(['contains', 'startsWith', 'endsWith', RE2_MATCHES, 'isSorted', 'isURL', 'isQuantity', 'isIP', 'isCIDR', 'isSemver', 'hasValue', 'isInteger', 'isGreaterThan', 'isLessThan', 'containsIP', 'containsCIDR', 'isUnspecified', 'isLoopback', 'isLinkLocalMulticast', 'isLinkLocalUnicast', 'isGlobalUnicast', 'isCanonical', 'allowed', 'errored', 'sets.contains', 'sets.intersects', 'sets.equivalent']);
const INT_FNS = new Set(['size', 'int', 'indexOf', 'lastIndexOf', 'sign', 'asInteger', 'compareTo', 'family', 'prefixLength', 'major', 'minor', 'patch', 'getFullYear', 'getMonth', 'getDate', 'getDayOfMonth', 'getDayOfWeek', 'getDayOfYear', 'getHours', 'getMinutes', 'getSeconds', 'getMilliseconds']);
const STRING_FNS = new Set(['string', 'lowerAscii', 'upperAscii', 'trim', 'replace', 'substring', 'charAt', 'reverse', 'format', 'find', 'join', 'strings.quote', 'getScheme', 'getHostname', 'getHost', 'getPort', 'getEscapedPath', 'reason', 'error', 'jsonpatch.escapeKey']);
const OPAQUE_FNS: Record<string, string> = { url: 'URL', quantity: 'Quantity', ip: 'IP', cidr: 'CIDR', semver: 'Semver', masked: 'CIDR', add: 'Quantity', sub: 'Quantity' };

function lit(v: unknown, t: CelType): Expr {
  return { k: 'lit', v, t };
}

function ident(name: string, t: CelType): Expr {
  return { k: 'ident', name, t };
}

function call(fn: string, args: Expr[], overloads: string[], t: CelType, target?: Expr): Expr {
  return { k: 'call', fn, args, overloads, t, target };
}

function literalType(v: unknown): CelType {
  if (typeof v === 'string') return STRING;
  if (typeof v === 'bigint') return INT;
  if (typeof v === 'number') return simple('double');
  if (typeof v === 'boolean') return BOOL;
  if (v === null) return simple('null');
  if (v instanceof Uint8Array) return simple('bytes');
  if (typeof v === 'object' && (v as object).constructor?.name === 'UnsignedInt') return simple('uint');
  return DYN;
}

/** The kinds a value of `t` may have at run time (dyn: any). */
function mayBe(t: CelType, ...kinds: string[]): boolean {
  return t.kind === 'dyn' || kinds.includes(t.kind);
}

const NUMERIC = ['int', 'uint', 'double', 'timestamp', 'duration'];

/** Overloads of `_+_`, `_<_`…: the families both operands may belong to. */
function familyOverloads(prefix: string, a: CelType, b: CelType, families: string[]): string[] {
  const out = families.filter((f) => mayBe(a, f) && mayBe(b, f)).map((f) => `${prefix}_${f}`);
  if (mayBe(a, ...NUMERIC) && mayBe(b, ...NUMERIC)) out.push(`${prefix}_other`);
  return out.length > 0 ? out : [`${prefix}_other`];
}

function addType(a: CelType, b: CelType): CelType {
  if (a.kind !== 'dyn') return a.kind === 'duration' && b.kind === 'timestamp' ? b : a;
  return b.kind === 'dyn' ? DYN : b;
}

class Lowering {
  private readonly scopes: Array<Map<string, CelType>>;

  constructor(vars: Map<string, CelType>) {
    this.scopes = [vars];
  }

  private lookup(name: string): CelType | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const t = this.scopes[i].get(name);
      if (t) return t;
    }
    return undefined;
  }

  private scoped<T>(vars: Record<string, CelType>, fn: () => T): T {
    this.scopes.push(new Map(Object.entries(vars)));
    try {
      return fn();
    } finally {
      this.scopes.pop();
    }
  }

  lower(n: AstNode): Expr {
    const a = n.args as unknown[];
    switch (n.op) {
      case 'value':
        return lit(n.args, literalType(n.args));
      case 'id':
        return ident(String(n.args), this.lookup(String(n.args)) ?? DYN);
      case '.':
        return this.select(a[0] as AstNode, String(a[1]), false);
      case '.?': {
        const operand = this.lower(a[0] as AstNode);
        return call('_?._', [operand, lit(String(a[1]), STRING)], ['select_optional_field'], { kind: 'optional', elem: fieldType(operand.t, String(a[1])) });
      }
      case '[]':
        return this.index(a[0] as AstNode, a[1] as AstNode);
      case '[?]': {
        const [target, index] = [this.lower(a[0] as AstNode), this.lower(a[1] as AstNode)];
        return call('_[?_]', [target, index], ['optional_index'], { kind: 'optional', elem: target.t.elem ?? DYN });
      }
      case 'list': {
        const elems = (a as AstNode[]).map((x) => this.lower(x));
        return { k: 'list', elems, t: listOf(elems[0]?.t ?? DYN) };
      }
      case 'map': {
        const entries = (n.args as AstNode[][]).map(([k, v]) => [this.lower(k), this.lower(v)] as [Expr, Expr]);
        return { k: 'map', entries, t: { kind: 'map', key: entries[0]?.[0].t ?? DYN, elem: entries[0]?.[1].t ?? DYN } };
      }
      case '?:': {
        const [c, x, y] = (a as AstNode[]).map((e) => this.lower(e));
        return call('_?_:_', [c, x, y], ['conditional'], x.t.kind === 'dyn' ? y.t : x.t);
      }
      case '&&':
      case '||':
        return call(`_${n.op}_`, (a as AstNode[]).map((e) => this.lower(e)), [n.op === '&&' ? 'logical_and' : 'logical_or'], BOOL);
      case '!_':
        return call('!_', [this.lower(n.args as AstNode)], ['logical_not'], BOOL);
      case '-_': {
        const inner = n.args as AstNode;
        if (inner.op === 'value' && typeof inner.args !== 'string' && typeof inner.args !== 'boolean') return lit(inner.args, literalType(inner.args));
        const x = this.lower(inner);
        return call('-_', [x], ['negate'], x.t);
      }
      case 'call':
        return this.global(String(a[0]), (a[1] as AstNode[]).map((x) => x));
      case 'rcall':
        return this.member(String(a[0]), a[1] as AstNode, a[2] as AstNode[]);
      default:
        return this.operator(n.op, (a as AstNode[]).map((x) => this.lower(x)));
    }
  }

  private select(operand: AstNode, field: string, testOnly: boolean): Expr {
    const o = this.lower(operand);
    return { k: 'select', operand: o, field, testOnly, t: testOnly ? BOOL : fieldType(o.t, field) };
  }

  private index(targetAst: AstNode, indexAst: AstNode): Expr {
    const target = this.lower(targetAst);
    const index = this.lower(indexAst);
    const t = target.t;
    const overloads = t.kind === 'list' ? ['index_list'] : t.kind === 'map' ? ['index_map'] : t.kind === 'dyn' ? ['index_list', 'index_map'] : ['index_other'];
    const result = t.kind === 'list' || t.kind === 'map' ? (t.elem ?? DYN) : t.kind === 'object' && index.k === 'lit' ? fieldType(t, String(index.v)) : DYN;
    return call('_[_]', [target, index], overloads, result);
  }

  private operator(op: string, args: Expr[]): Expr {
    const [a, b] = args;
    switch (op) {
      case '==':
        return call('_==_', args, ['equals'], BOOL);
      case '!=':
        return call('_!=_', args, ['not_equals'], BOOL);
      case '<':
      case '<=':
      case '>':
      case '>=':
        return call(`_${op}_`, args, familyOverloads('compare', a.t, b.t, ['string', 'bytes']), BOOL);
      case 'in': {
        const overloads = b.t.kind === 'list' ? ['in_list'] : b.t.kind === 'map' ? ['in_map'] : ['in_list', 'in_map'];
        return call('@in', args, overloads, BOOL);
      }
      case '+':
        return call('_+_', args, familyOverloads('add', a.t, b.t, ['string', 'bytes', 'list']), addType(a.t, b.t));
      default:
        return call(`_${op}_`, args, ['arithmetic'], a?.t.kind === 'timestamp' && b?.t.kind === 'timestamp' ? simple('duration') : (a?.t ?? DYN));
    }
  }

  private global(name: string, argAsts: AstNode[]): Expr {
    if (name === HAS_MACRO || name === 'has') {
      const sel = argAsts[0];
      const [operand, field] = sel.args as [AstNode, string];
      return this.select(operand, field, true);
    }
    const args = argAsts.map((x) => this.lower(x));
    if (name === RE2_MATCHES) return call('matches', args, ['matches'], BOOL);
    if (name === 'dyn') return call('dyn', args, ['to_dyn'], DYN);
    if (name === 'string' && args[0]?.t.kind === 'bytes') return call('string', args, ['bytes_to_string'], STRING);
    if (name === 'bytes' && args[0]?.t.kind === 'string') return call('bytes', args, ['string_to_bytes'], simple('bytes'));
    return call(name, args, [name], resultType(name, undefined, args));
  }

  private member(name: string, targetAst: AstNode, argAsts: AstNode[]): Expr {
    const ns = targetAst.op === 'id' && NAMESPACES.has(String(targetAst.args)) && !this.lookup(String(targetAst.args)) ? String(targetAst.args) : undefined;
    if (ns === 'cel' && name === 'bind') return this.bind(argAsts);
    if (ns) {
      const args = argAsts.map((x) => this.lower(x));
      const fn = `${ns}.${name}`;
      const overloads = ns === 'sets' ? [`list_sets_${name}_list`] : fn === 'strings.quote' ? ['strings_quote'] : [fn];
      const t = ns === 'optional' ? { kind: 'optional' as const, elem: args[0]?.t ?? DYN } : ns === 'format' ? formatResultType(name) : resultType(fn, undefined, args);
      return call(fn, args, overloads, t);
    }
    if (['all', 'exists', 'exists_one', 'existsOne', 'map', 'filter'].includes(name) && argAsts.length >= 2 && argAsts[0].op === 'id') {
      return this.comprehension(name, this.lower(targetAst), String(argAsts[0].args), argAsts.slice(1));
    }
    const target = this.lower(targetAst);
    const args = argAsts.map((x) => this.lower(x));
    return call(name === RE2_MATCHES ? 'matches' : name, args, memberOverloads(name, target, args), resultType(name, target, args), target);
  }

  private bind(argAsts: AstNode[]): Expr {
    const v = String(argAsts[0].args);
    const init = this.lower(argAsts[1]);
    const result = this.scoped({ [v]: init.t }, () => this.lower(argAsts[2]));
    const empty: Expr = { k: 'list', elems: [], t: listOf(DYN) };
    return { k: 'comp', range: empty, iterVar: '#unused', accuVar: v, init, cond: lit(false, BOOL), step: ident(v, init.t), result, t: result.t };
  }

  private comprehension(name: string, range: Expr, v: string, bodies: AstNode[]): Expr {
    const rt = range.t;
    const iterType = rt.kind === 'list' ? (rt.elem ?? DYN) : rt.kind === 'map' ? (rt.key ?? DYN) : DYN;
    const lowered = this.scoped({ [v]: iterType }, () => bodies.map((b) => this.lower(b)));
    const accu = (t: CelType): Expr => ident(ACCUMULATOR, t);
    const comp = (init: Expr, cond: Expr, step: Expr, result: Expr, t: CelType): Expr => ({ k: 'comp', range, iterVar: v, accuVar: ACCUMULATOR, init, cond, step, result, t });
    const pred = lowered[0];
    switch (name) {
      case 'all':
        return comp(lit(true, BOOL), call('@not_strictly_false', [accu(BOOL)], ['not_strictly_false'], BOOL), call('_&&_', [accu(BOOL), pred], ['logical_and'], BOOL), accu(BOOL), BOOL);
      case 'exists': {
        const cond = call('@not_strictly_false', [call('!_', [accu(BOOL)], ['logical_not'], BOOL)], ['not_strictly_false'], BOOL);
        return comp(lit(false, BOOL), cond, call('_||_', [accu(BOOL), pred], ['logical_or'], BOOL), accu(BOOL), BOOL);
      }
      case 'exists_one':
      case 'existsOne': {
        const step = call('_?_:_', [pred, call('_+_', [accu(INT), lit(1n, INT)], ['add_other'], INT), accu(INT)], ['conditional'], INT);
        return comp(lit(0n, INT), lit(true, BOOL), step, call('_==_', [accu(INT), lit(1n, INT)], ['equals'], BOOL), BOOL);
      }
      case 'map': {
        const fn = lowered[lowered.length - 1];
        const t = listOf(fn.t);
        let step = call('_+_', [accu(t), { k: 'list', elems: [fn], t }], ['add_list'], t);
        if (lowered.length === 2) step = call('_?_:_', [pred, step, accu(t)], ['conditional'], t);
        return comp({ k: 'list', elems: [], t }, lit(true, BOOL), step, accu(t), t);
      }
      default: {
        const t = rt.kind === 'list' ? rt : listOf(iterType);
        const add = call('_+_', [accu(t), { k: 'list', elems: [ident(v, iterType)], t }], ['add_list'], t);
        return comp({ k: 'list', elems: [], t }, lit(true, BOOL), call('_?_:_', [pred, add, accu(t)], ['conditional'], t), accu(t), t);
      }
    }
  }
}

function fieldType(t: CelType, field: string): CelType {
  if (t.kind === 'object') return t.fields?.get(field) ?? DYN;
  if (t.kind === 'map') return t.elem ?? DYN;
  return DYN;
}

function memberOverloads(name: string, target: Expr, args: Expr[]): string[] {
  const t = target.t;
  switch (name) {
    case RE2_MATCHES:
      return ['matches_string'];
    case 'contains':
      return ['contains_string'];
    case 'startsWith':
      return ['starts_with_string'];
    case 'endsWith':
      return ['ends_with_string'];
    case 'format':
      return ['string_format'];
    case 'ip':
      return t.kind === 'opaque' && t.name === 'CIDR' ? ['cidr_ip'] : ['ip'];
    case 'containsIP':
      return [args[0]?.t.kind === 'string' ? 'cidr_contains_ip_string' : 'cidr_contains_ip_ip'];
    case 'containsCIDR':
      return [args[0]?.t.kind === 'string' ? 'cidr_contains_cidr_string' : 'cidr_contains_cidr'];
    default:
      return [name];
  }
}

/** `format.named(name)` is an optional<Format>, `format.dns1123Label()` and its kin a Format. */
function formatResultType(name: string): CelType {
  const format = simple('opaque', 'Format');
  return name === 'named' ? { kind: 'optional', elem: format } : format;
}

function resultType(name: string, target: Expr | undefined, args: Expr[]): CelType {
  const t = target?.t;
  if (BOOL_FNS.has(name)) return BOOL;
  if (INT_FNS.has(name)) return INT;
  if (STRING_FNS.has(name)) return STRING;
  if (OPAQUE_FNS[name]) return simple('opaque', OPAQUE_FNS[name]);
  switch (name) {
    case 'split':
    case 'findAll':
      return listOf(STRING);
    case 'uint':
    case 'double':
    case 'bytes':
    case 'timestamp':
    case 'duration':
      return simple(name);
    case 'asApproximateFloat':
      return simple('double');
    case 'sum':
    case 'min':
    case 'max':
      return t?.elem ?? DYN;
    case 'value':
    case 'orValue':
      return t?.kind === 'optional' ? (t.elem ?? DYN) : DYN;
    case 'or':
      return t ?? DYN;
    case 'getQuery':
      return { kind: 'map', key: STRING, elem: listOf(STRING) };
    case 'type':
      return simple('type');
    default:
      return DYN;
  }
}

/**
 * The lowered, typed form of a cel-js AST, with variables of the given
 * types (unlisted ones are dyn). Throws nothing for well-formed cel-js
 * ASTs; unknown functions are typed dyn with their name as overload.
 */
export function lowerCelAst(ast: unknown, vars: Record<string, CelType>): Expr {
  return new Lowering(new Map(Object.entries(vars))).lower(ast as AstNode);
}
