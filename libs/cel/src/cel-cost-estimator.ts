import { functionCost, type Operand, type PathSize } from './cel-cost-functions.js';
import { ACCUMULATOR, type Expr, lowerCelAst } from './cel-cost-lowering.js';
import { add, COST, type DeclType, fixed, isScalar, mul, type Range, union, UNKNOWN } from './cel-cost-size.js';

/**
 * Static worst-case cost of a CEL expression, computed as cel-go's
 * checker (checker/cost.go) computes it with the Kubernetes cost
 * estimator and size estimator (apiextensions-apiserver's
 * schema/cel/compilation.go): every identifier and field selection costs
 * 1, a comprehension its range's size times the cost of one step, string
 * functions a tenth of the length they traverse, `matches` the length
 * times a quarter of the pattern's; the sizes of strings, lists and maps
 * are the bounds their declared types carry (maxLength, maxItems,
 * maxProperties, or what a 3 MiB request can hold). `has()` is free, as
 * Kubernetes configures it. Pure; the figures are upstream's, unit by unit.
 */

interface EntrySize {
  container: 'list' | 'map';
  key: Range;
  val: Range;
}

interface LocalVar {
  path?: readonly string[];
  size?: Range;
  entry?: EntrySize;
}

const ZERO = fixed(0);

function unionEntries(a: EntrySize | undefined, b: EntrySize | undefined): EntrySize | undefined {
  if (!a || !b) return undefined;
  return { container: a.container, key: union(a.key, b.key), val: union(a.val, b.val) };
}

/** Literal sizes (cel-go computeExprSize): characters, bytes, entries, or 1 for scalars. */
function exprSize(e: Expr): Range | undefined {
  if (e.k === 'list') return fixed(e.elems.length);
  if (e.k === 'map') return fixed(e.entries.length);
  if (e.k !== 'lit') return undefined;
  if (typeof e.v === 'string') return fixed([...e.v].length);
  if (e.v instanceof Uint8Array) return fixed(e.v.length);
  return fixed(1);
}

class Coster {
  private readonly paths = new Map<Expr, readonly string[]>();
  private readonly sizes = new Map<Expr, Range>();
  private readonly entries = new Map<Expr, EntrySize>();
  private readonly locals = new Map<string, LocalVar[]>();

  constructor(private readonly pathSize: PathSize) {}

  cost(e: Expr): Range {
    switch (e.k) {
      case 'lit':
        return fixed(COST.constant);
      case 'ident': {
        const v = this.local(e.name);
        const path = v ? v.path : [e.name];
        if (path) this.paths.set(e, path);
        return fixed(COST.selectAndIdent);
      }
      case 'select':
        return this.select(e);
      case 'call':
        return this.call(e);
      case 'list':
        return this.createList(e);
      case 'map':
        return this.createMap(e);
      case 'comp':
        return this.isBind(e) ? this.bind(e) : this.comprehension(e);
    }
  }

  private local(name: string): LocalVar | undefined {
    const stack = this.locals.get(name);
    return stack && stack.length > 0 ? stack[stack.length - 1] : undefined;
  }

  private push(name: string, v: LocalVar): void {
    const stack = this.locals.get(name) ?? [];
    stack.push(v);
    this.locals.set(name, stack);
  }

  private pop(name: string): void {
    this.locals.get(name)?.pop();
  }

  private path(e: Expr): readonly string[] | undefined {
    if (e.k === 'ident') {
      const v = this.local(e.name);
      if (v) return v.path;
    }
    return this.paths.get(e);
  }

  /** cel-go computeSize: recorded, literal, declared at its path, scalar, or a local's. */
  private size(e: Expr): Range | undefined {
    const recorded = this.sizes.get(e);
    if (recorded) return recorded;
    const literal = exprSize(e);
    if (literal) return literal;
    const declared = this.pathSize(this.path(e));
    if (declared) {
      this.sizes.set(e, declared);
      return declared;
    }
    if (isScalar(e.t)) return fixed(1);
    if (e.k === 'ident') return this.local(e.name)?.size;
    return undefined;
  }

  private entry(e: Expr): EntrySize | undefined {
    return this.entries.get(e) ?? (e.k === 'ident' ? this.local(e.name)?.entry : undefined);
  }

  private operand(e: Expr): Operand {
    let path = this.path(e);
    if (path && path[0] === ACCUMULATOR) path = undefined;
    const computed = this.size(e);
    return { t: e.t, path, computed, size: computed ?? UNKNOWN, literal: e.k === 'lit' ? e.v : undefined };
  }

  private select(e: Extract<Expr, { k: 'select' }>): Range {
    if (e.testOnly) return add(ZERO, this.cost(e.operand));
    let sum = this.cost(e.operand);
    const kind = e.operand.t.kind;
    if (kind === 'map' || kind === 'object') sum = add(sum, fixed(COST.selectAndIdent));
    this.paths.set(e, [...(this.path(e.operand) ?? []), e.field]);
    return sum;
  }

  private call(e: Extract<Expr, { k: 'call' }>): Range {
    if (e.fn === 'dyn' && e.args.length === 1) {
      const argCost = this.cost(e.args[0]);
      this.copySizes(e, e.args[0]);
      return add(fixed(1), argCost);
    }
    const argCosts: Range[] = [];
    const args: Operand[] = [];
    for (const a of e.args) {
      argCosts.push(this.cost(a));
      args.push(this.operand(a));
    }
    let sum = ZERO;
    let target: Operand | undefined;
    if (e.target) {
      sum = this.cost(e.target);
      target = this.operand(e.target);
    }
    let fnCost: Range = { min: Number.MAX_VALUE, max: 0 };
    let resultSize: Range | undefined;
    for (const overload of e.overloads) {
      const est = overload === 'conditional' ? this.conditional(e, argCosts) : functionCost(e.fn, overload, target, args, argCosts, this.pathSize);
      fnCost = union(fnCost, est.cost);
      if (est.resultSize) resultSize = resultSize ? union(resultSize, est.resultSize) : est.resultSize;
      if (overload === 'index_list' || overload === 'index_map') {
        resultSize = this.entry(e.args[0])?.val;
        this.paths.set(e, [...(this.path(e.args[0]) ?? []), overload === 'index_list' ? '@items' : '@values']);
      }
      resultSize ??= this.size(e);
    }
    if (resultSize) this.sizes.set(e, resultSize);
    return add(sum, fnCost);
  }

  private conditional(e: Extract<Expr, { k: 'call' }>, argCosts: Range[]): { cost: Range; resultSize: Range } {
    const [, t, f] = e.args;
    const size = union(this.size(t) ?? UNKNOWN, this.size(f) ?? UNKNOWN);
    const entry = unionEntries(this.entry(t), this.entry(f));
    if (entry) this.entries.set(e, entry);
    return { cost: add(argCosts[0], union(argCosts[1], argCosts[2])), resultSize: size };
  }

  private createList(e: Extract<Expr, { k: 'list' }>): Range {
    let sum = ZERO;
    let item: Range = { min: e.elems.length === 0 ? 0 : Number.MAX_VALUE, max: 0 };
    for (const x of e.elems) {
      sum = add(sum, this.cost(x));
      item = union(item, this.size(x) ?? UNKNOWN);
    }
    this.entries.set(e, { container: 'list', key: fixed(1), val: item });
    return add(sum, fixed(COST.listCreate));
  }

  private createMap(e: Extract<Expr, { k: 'map' }>): Range {
    let sum = ZERO;
    const empty = e.entries.length === 0;
    let key: Range = { min: empty ? 0 : Number.MAX_VALUE, max: 0 };
    let val: Range = { min: empty ? 0 : Number.MAX_VALUE, max: 0 };
    for (const [k, v] of e.entries) {
      sum = add(add(sum, this.cost(k)), this.cost(v));
      key = union(key, this.size(k) ?? UNKNOWN);
      val = union(val, this.size(v) ?? UNKNOWN);
    }
    this.entries.set(e, { container: 'map', key, val });
    return add(sum, fixed(COST.mapCreate));
  }

  private pushLocal(name: string, init: Expr): void {
    this.push(name, { path: this.path(init), size: this.size(init), entry: this.entry(init) });
  }

  /** The iteration variable: a list's items, or a map's keys (cel-go pushIterSingle). */
  private pushIter(name: string, range: Expr): void {
    const entry = this.entry(range);
    const container = entry?.container ?? (range.t.kind === 'list' ? 'list' : 'map');
    const path = [...(this.path(range) ?? []), container === 'list' ? '@items' : '@keys'];
    this.push(name, { path, size: container === 'list' ? entry?.val : entry?.key });
  }

  private comprehension(e: Extract<Expr, { k: 'comp' }>): Range {
    let sum = add(this.cost(e.range), this.cost(e.init));
    this.pushLocal(e.accuVar, e.init);
    this.pushIter(e.iterVar, e.range);
    const loopCost = this.cost(e.cond);
    const stepCost = this.cost(e.step);
    this.pop(e.iterVar);
    sum = add(sum, this.cost(e.result));
    this.pop(e.accuVar);
    const rangeCount = this.size(e.range) ?? UNKNOWN;
    sum = add(sum, mul(rangeCount, add(stepCost, loopCost)));
    if (e.init.k === 'lit') {
      const s = this.size(e.init);
      if (s) this.sizes.set(e, s);
    } else if (e.init.k === 'list' || e.init.k === 'map') {
      this.sizes.set(e, rangeCount);
      const stepEntry = this.entry(e.step);
      if (stepEntry) this.entries.set(e, stepEntry);
    }
    return sum;
  }

  private isBind(e: Extract<Expr, { k: 'comp' }>): boolean {
    return e.range.k === 'list' && e.range.elems.length === 0 && e.cond.k === 'lit' && e.cond.v === false && e.accuVar !== ACCUMULATOR;
  }

  private bind(e: Extract<Expr, { k: 'comp' }>): Range {
    let sum = add(this.cost(e.range), this.cost(e.init));
    this.pushLocal(e.accuVar, e.init);
    sum = add(sum, this.cost(e.result));
    this.pop(e.accuVar);
    this.copySizes(e, e.result);
    return sum;
  }

  private copySizes(dst: Expr, src: Expr): void {
    const s = this.size(src);
    if (s) this.sizes.set(dst, s);
    const en = this.entry(src);
    if (en) this.entries.set(dst, en);
  }
}

/**
 * The declared size bound at `path` (`['self', 'spec', 'items', '@items']`)
 * under `root`, as apiextensions' sizeEstimator finds it: the first
 * element (the variable) is skipped, `@items` and `@values` step into
 * elements, `@keys` into keys, anything else into a field. Undefined when
 * the path leaves the declared types.
 */
export function declaredSize(root: DeclType, path: readonly string[] | undefined): Range | undefined {
  if (!path || path.length === 0) return undefined;
  let node: DeclType | undefined = root;
  for (const name of path.slice(1)) {
    if (name === '@items' || name === '@values') node = node.elem;
    else if (name === '@keys') node = node.key;
    else node = node.fields?.get(name);
    if (!node) return undefined;
  }
  return { min: 0, max: node.maxElements };
}

/**
 * The worst-case cost (the estimate's maximum) of evaluating `ast` (a
 * cel-js AST from compileCel) once, where `self` and `oldSelf` have the
 * declared type `self`. Saturates at 2^64 (uint64's largest). Pure.
 */
export function estimateCelCost(ast: unknown, self: DeclType): number {
  const expr = lowerCelAst(ast, { self, oldSelf: self });
  return new Coster((path) => declaredSize(self, path)).cost(expr).max;
}
