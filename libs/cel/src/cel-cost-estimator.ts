/**
 * Static worst-case cost of a CEL expression, after cel-go's cost
 * estimator (checker/cost.go) and the Kubernetes library costs: the cost
 * an expression may reach given the largest values its variables can
 * hold. Size bounds come from the caller (for CRD rules: maxItems,
 * maxLength, maxProperties, or what the 3 MiB request limit allows).
 * Comprehensions multiply their body by the size of their range, so
 * nested quantifiers over unbounded lists come out huge, as upstream.
 * Pure; an upper bound, never exact.
 */

/** The largest shape a value may have. */
export interface SizeBound {
  kind: 'string' | 'bytes' | 'list' | 'map' | 'scalar' | 'dyn';
  /** Length (strings, bytes) or number of entries (lists, maps). */
  max: number;
  /** Elements of a list, values of a map with arbitrary keys. */
  elem?: SizeBound;
  /** Known fields of an object. */
  fields?: Map<string, SizeBound>;
}

/** Upstream's maxRequestSizeBytes: what an unbounded string or list can hold at most. */
export const CEL_MAX_REQUEST_BYTES = 3 * 1024 * 1024;
/** A value of unknown shape: as large as a request. */
export const UNBOUNDED: SizeBound = { kind: 'dyn', max: CEL_MAX_REQUEST_BYTES };

const STRING_TRAVERSAL = 0.1;
const REGEX_LENGTH_FACTOR = 0.25;
const LIST_CREATE = 10;
const MAP_CREATE = 30;
const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'existsOne', 'map', 'filter', 'transformList', 'transformMap', 'transformMapEntry']);
const TRAVERSING = new Set(['contains', 'startsWith', 'endsWith', 'lowerAscii', 'upperAscii', 'trim', 'replace', 'split', 'substring', 'charAt', 'indexOf', 'lastIndexOf', 'reverse', 'quote', 'format', 'join', 'string', 'bytes', 'url', 'isURL', 'quantity', 'isQuantity', 'ip', 'isIP', 'cidr', 'isCIDR', 'base64']);
const LIST_SCANS = new Set(['isSorted', 'sum', 'min', 'max', 'indexOf', 'lastIndexOf', 'flatten', 'distinct', 'sort', 'slice']);
const REGEXES = new Set(['matches', '__re2__', 'find', 'findAll']);

const MAX = Number.MAX_SAFE_INTEGER;
const mul = (a: number, b: number): number => Math.min(MAX, a * b);
const add = (...xs: number[]): number => Math.min(MAX, xs.reduce((s, x) => s + x, 0));

interface Node {
  op: string;
  args: unknown;
}

interface Estimate {
  cost: number;
  size: SizeBound;
}

const SCALAR: SizeBound = { kind: 'scalar', max: 1 };

function isNode(x: unknown): x is Node {
  return typeof x === 'object' && x !== null && typeof (x as Node).op === 'string';
}

function traversal(size: SizeBound): number {
  return Math.ceil(size.max * STRING_TRAVERSAL);
}

class Estimator {
  constructor(private readonly scopes: Array<Map<string, SizeBound>>) {}

  estimate(n: unknown): Estimate {
    if (!isNode(n)) return { cost: 0, size: UNBOUNDED };
    switch (n.op) {
      case 'value':
        return { cost: 0, size: literalSize(n.args) };
      case 'id':
        return { cost: 1, size: this.lookup(String(n.args)) };
      case '.':
      case '.?': {
        const [target, field] = n.args as [unknown, string];
        const t = this.estimate(target);
        return { cost: add(t.cost, 1), size: fieldOf(t.size, field) };
      }
      case '[]':
      case '[?]': {
        const [target, index] = n.args as [unknown, unknown];
        const t = this.estimate(target);
        const i = this.estimate(index);
        return { cost: add(t.cost, i.cost, 1), size: t.size.elem ?? (isNode(index) && index.op === 'value' ? fieldOf(t.size, String(index.args)) : UNBOUNDED) };
      }
      case 'list': {
        const items = (n.args as unknown[]).map((x) => this.estimate(x));
        return { cost: add(LIST_CREATE, ...items.map((x) => x.cost)), size: { kind: 'list', max: items.length, elem: widest(items.map((x) => x.size)) } };
      }
      case 'map': {
        const entries = (n.args as unknown[][]).flat().map((x) => this.estimate(x));
        return { cost: add(MAP_CREATE, ...entries.map((x) => x.cost)), size: { kind: 'map', max: entries.length / 2, elem: widest(entries.map((x) => x.size)) } };
      }
      case 'call':
        return this.call(String((n.args as unknown[])[0]), undefined, (n.args as unknown[])[1] as unknown[]);
      case 'rcall': {
        const [name, target, args] = n.args as [string, unknown, unknown[]];
        if (COMPREHENSIONS.has(name)) return this.comprehension(name, target, args);
        return this.call(name, target, args);
      }
      case '?:': {
        const [c, a, b] = (n.args as unknown[]).map((x) => this.estimate(x));
        return { cost: add(c.cost, Math.max(a.cost, b.cost)), size: widest([a.size, b.size]) ?? UNBOUNDED };
      }
      default:
        return this.operator(n);
    }
  }

  private lookup(name: string): SizeBound {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const hit = this.scopes[i].get(name);
      if (hit) return hit;
    }
    return UNBOUNDED;
  }

  private operator(n: Node): Estimate {
    const operands = (Array.isArray(n.args) ? n.args : [n.args]).map((x) => this.estimate(x));
    const base = add(...operands.map((x) => x.cost));
    const [a, b] = operands;
    switch (n.op) {
      case '==':
      case '!=':
      case '<':
      case '<=':
      case '>':
      case '>=':
        return { cost: add(base, 1, compareCost(a.size, b?.size)), size: SCALAR };
      case 'in':
        return { cost: add(base, 1, b && b.size.kind !== 'scalar' ? b.size.max : 1), size: SCALAR };
      case '+':
        if (a && b && (a.size.kind === 'string' || a.size.kind === 'bytes' || a.size.kind === 'list')) {
          const size: SizeBound = { ...a.size, max: Math.min(MAX, a.size.max + b.size.max), elem: a.size.elem };
          return { cost: add(base, 1, Math.ceil(size.max * STRING_TRAVERSAL)), size };
        }
        return { cost: add(base, 1), size: a?.size ?? SCALAR };
      default:
        return { cost: add(base, 1), size: SCALAR };
    }
  }

  private call(name: string, target: unknown, args: unknown[] = []): Estimate {
    const t = target === undefined ? undefined : this.estimate(target);
    const as = args.map((x) => this.estimate(x));
    const base = add(t?.cost ?? 0, ...as.map((x) => x.cost));
    const subject = t?.size ?? as[0]?.size ?? SCALAR;
    if (REGEXES.has(name)) {
      const str = t ? t.size : as[0]?.size ?? UNBOUNDED;
      const re = t ? as[0]?.size : as[1]?.size;
      const cost = mul(Math.max(1, traversal(str)), Math.max(1, Math.ceil((re?.max ?? CEL_MAX_REQUEST_BYTES) * REGEX_LENGTH_FACTOR)));
      const size = name === 'findAll' ? { kind: 'list' as const, max: str.max, elem: str } : name === 'find' ? str : SCALAR;
      return { cost: add(base, cost), size };
    }
    if (name === 'size' || name === 'h_s' || name === 'has') return { cost: add(base, 1), size: SCALAR };
    if (LIST_SCANS.has(name) && subject.kind === 'list') {
      return { cost: add(base, 1, mul(subject.max, Math.max(1, traversal(subject.elem ?? SCALAR)))), size: name === 'sort' || name === 'distinct' || name === 'slice' ? subject : (subject.elem ?? SCALAR) };
    }
    if (TRAVERSING.has(name)) {
      const size = name === 'split' ? { kind: 'list' as const, max: subject.max, elem: subject } : subject.kind === 'scalar' ? UNBOUNDED : subject;
      return { cost: add(base, 1, traversal(subject), ...as.map((x) => traversal(x.size))), size };
    }
    return { cost: add(base, 1), size: t?.size.kind === 'dyn' ? UNBOUNDED : SCALAR };
  }

  /** all/exists/map/filter…: the range once, then the body (and predicate) once per element. */
  private comprehension(name: string, target: unknown, args: unknown[]): Estimate {
    const range = this.estimate(target);
    const vars = args.filter((x, i) => i < args.length - 1 && isNode(x) && x.op === 'id').map((x) => String((x as Node).args));
    const bodies = args.slice(vars.length);
    const scope = new Map<string, SizeBound>();
    const elem = range.size.elem ?? (range.size.kind === 'dyn' ? UNBOUNDED : SCALAR);
    if (vars.length === 2) {
      scope.set(vars[0], range.size.kind === 'list' ? SCALAR : { kind: 'string', max: CEL_MAX_REQUEST_BYTES });
      scope.set(vars[1], elem);
    } else if (vars.length === 1) scope.set(vars[0], range.size.kind === 'map' && !range.size.elem ? { kind: 'string', max: CEL_MAX_REQUEST_BYTES } : elem);
    this.scopes.push(scope);
    const per = bodies.map((b) => this.estimate(b));
    this.scopes.pop();
    const step = add(1, ...per.map((x) => x.cost));
    const cost = add(range.cost, 1, mul(range.size.max, step));
    let size: SizeBound = SCALAR;
    if (name === 'map' || name === 'transformList') size = { kind: 'list', max: range.size.max, elem: per[per.length - 1]?.size ?? UNBOUNDED };
    else if (name === 'filter') size = range.size;
    else if (name.startsWith('transformMap')) size = { kind: 'map', max: range.size.max, elem: per[per.length - 1]?.size ?? UNBOUNDED };
    return { cost, size };
  }
}

function literalSize(v: unknown): SizeBound {
  if (typeof v === 'string') return { kind: 'string', max: v.length };
  if (v instanceof Uint8Array) return { kind: 'bytes', max: v.length };
  return SCALAR;
}

function fieldOf(s: SizeBound, field: string): SizeBound {
  if (s.fields?.has(field)) return s.fields.get(field)!;
  if (s.elem && s.kind === 'map') return s.elem;
  return s.kind === 'dyn' ? UNBOUNDED : s.fields ? SCALAR : UNBOUNDED;
}

function widest(sizes: SizeBound[]): SizeBound | undefined {
  return sizes.reduce<SizeBound | undefined>((w, s) => (!w || s.max > w.max ? s : w), undefined);
}

function compareCost(a: SizeBound | undefined, b: SizeBound | undefined): number {
  const sizes = [a, b].filter((x): x is SizeBound => x !== undefined && x.kind !== 'scalar');
  if (sizes.length === 0) return 0;
  const smallest = sizes.reduce((m, s) => (s.max < m.max ? s : m));
  if (smallest.kind === 'string' || smallest.kind === 'bytes') return traversal(smallest);
  return mul(smallest.max, Math.max(1, traversal(smallest.elem ?? SCALAR)));
}

/**
 * The worst-case cost of evaluating `ast` (a cel-js AST) once, with each
 * variable bounded by `vars` (unknown variables are unbounded). Saturates
 * at Number.MAX_SAFE_INTEGER.
 */
export function estimateCelCost(ast: unknown, vars: Record<string, SizeBound>): number {
  return new Estimator([new Map(Object.entries(vars))]).estimate(ast).cost;
}
