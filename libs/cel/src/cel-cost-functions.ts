import { add, COST, factor, fixed, MAX_UINT64, mul, type Range, union, UNKNOWN } from './cel-cost-size.js';
import type { CelType } from './cel-cost-size.js';

/**
 * What a function call costs by the estimate, given what is known of its
 * target and arguments: the Kubernetes libraries' estimates first
 * (k8s.io/apiserver pkg/cel/library/cost.go), then cel-go's extension
 * estimators (sets), then cel-go's own (checker/cost.go functionCost).
 * Every figure here is part of the API: a CRD is accepted or refused by it.
 */

/** What the estimator knows of one operand: its type, the path to it from a variable, its size. */
export interface Operand {
  readonly t: CelType;
  /** `['self', 'spec', '@items']`, or undefined when it is not reachable from a variable. */
  readonly path?: readonly string[];
  /** Its size when the expression itself tells (literals, results of sized calls), else undefined. */
  readonly computed?: Range;
  /** Its size: `computed`, else the declared bound at `path`. */
  readonly size: Range;
  /** Its value, when it is a literal. */
  readonly literal?: unknown;
}

/** The estimate of one call: its cost without its operands', and the size of its result when known. */
export interface CallEstimate {
  readonly cost: Range;
  readonly resultSize?: Range;
}

/** Looks up the declared size bound at a path (the CRD's size estimator). */
export type PathSize = (path: readonly string[] | undefined) => Range | undefined;

const ONE = fixed(1);
const ST = COST.stringTraversal;
const O1_TYPES = new Set(['IP', 'CIDR', 'Quantity', 'Semver', 'Authorizer', 'PathCheck', 'GroupCheck', 'ResourceCheck', 'Decision']);

/** The element operand of a list operand (apiserver listElementNode), when the list's element type is known. */
function listElement(list: Operand, pathSize: PathSize): Operand | undefined {
  const et = list.t.kind === 'list' ? list.t.elem : list.t.kind === 'map' ? list.t.key : undefined;
  if (!et) return undefined;
  const path = list.path ? [...list.path, '@items'] : undefined;
  return { t: et, path, size: pathSize(path) ?? UNKNOWN };
}

function replaceEstimate(sz: Range, from: Range, to: Range): CallEstimate {
  let countMax: number;
  let countMin: number;
  let keptMax = 0;
  let keptMin = 0;
  if (from.min === 0) {
    countMax = sz.max < MAX_UINT64 ? sz.max + 1 : sz.max;
    keptMax = sz.max;
  } else if (to.max <= from.min) {
    countMax = 0;
    keptMax = sz.max;
  } else countMax = Math.ceil(sz.max / from.min);
  if (from.max === 0) {
    countMin = sz.min < MAX_UINT64 ? sz.min + 1 : sz.min;
    keptMin = sz.min;
  } else if (from.max <= to.min) {
    countMin = 0;
    keptMin = sz.min;
  } else countMin = Math.ceil(sz.min / from.max);
  const size = add(mul({ min: countMin, max: countMax }, to), { min: keptMin, max: keptMax });
  return { cost: factor(sz, 2 * ST), resultSize: size };
}

function joinEstimate(target: Operand, args: Operand[], pathSize: PathSize): CallEstimate {
  const listSize = target.size;
  const el = listElement(target, pathSize);
  let sz: Range = el ? mul(listSize, el.size) : fixed(0);
  if (args.length > 0) {
    const seps = { min: listSize.min > 0 ? listSize.min - 1 : 0, max: listSize.max > 0 ? listSize.max - 1 : 0 };
    sz = add(sz, mul(args[0].size, seps));
  }
  return { cost: factor(sz, ST), resultSize: sz };
}

function listScanEstimate(fn: string, target: Operand, pathSize: PathSize): CallEstimate {
  const el = listElement(target, pathSize);
  if (el) {
    let elCost = ONE;
    if (el.t.kind === 'string' || el.t.kind === 'bytes') elCost = add(elCost, factor(el.size, ST));
    return { cost: mul(target.size, elCost) };
  }
  if (fn === 'includes') return { cost: mul(target.size, ONE) };
  return { cost: factor(target.size, ST) };
}

function equalsEstimate(lhs: Operand, rhs: Operand): CallEstimate | undefined {
  if (lhs.t.kind !== 'opaque' || rhs.t.kind !== 'opaque' || lhs.t.name !== rhs.t.name) return undefined;
  if (O1_TYPES.has(lhs.t.name ?? '')) return { cost: ONE };
  if (lhs.t.name === 'Format') return { cost: factor({ min: 1, max: 64 }, ST) };
  if (lhs.t.name === 'URL') {
    // Upstream compares the right-hand side's size with itself; kept, since the figure is what counts.
    const size = rhs.computed ? union(rhs.computed, rhs.computed) : ONE;
    return { cost: factor({ min: 1, max: size.max }, ST) };
  }
  return undefined;
}

/** A selector's parse: a traversal, plus a list and a struct per requirement (at most one per two characters). */
function selectorEstimate(len: Range): CallEstimate {
  const requirements = factor(len, 0.5);
  return { cost: add(add(fixed(COST.listCreate), factor(len, ST)), factor(requirements, COST.listCreate + COST.structCreate)) };
}

function cidrEstimate(overload: string, args: Operand[], containsCidr: boolean): CallEstimate {
  const sz = { min: 4, max: 16 };
  let cost = factor(add(sz, sz), ST);
  if (containsCidr) cost = add(add(cost, factor(sz, ST)), ONE);
  if (overload === 'cidr_contains_ip_string' || overload === 'cidr_contains_cidr_string') cost = add(cost, factor(args[0].size, ST));
  return { cost };
}

/** Kubernetes library functions of nominal cost: authorizer builders and accessors, IP/CIDR, Quantity, Semver and URL accessors. */
const NOMINAL = new Set([
  'serviceAccount', 'path', 'group', 'resource', 'subresource', 'namespace', 'name', 'allowed', 'reason', 'error', 'errored',
  'masked', 'prefixLength', 'family', 'isUnspecified', 'isLoopback', 'isLinkLocalMulticast', 'isLinkLocalUnicast', 'isGlobalUnicast',
  'format.named', 'sign', 'asInteger', 'isInteger', 'asApproximateFloat', 'isGreaterThan', 'isLessThan', 'compareTo', 'add', 'sub',
  'major', 'minor', 'patch', 'getScheme', 'getHostname', 'getHost', 'getPort', 'getEscapedPath', 'getQuery',
]);

/** The Kubernetes libraries' estimate (apiserver CostEstimator.EstimateCallCost), or undefined. */
function kubernetesEstimate(fn: string, overload: string, target: Operand | undefined, args: Operand[], pathSize: PathSize): CallEstimate | undefined {
  if (NOMINAL.has(fn)) return { cost: ONE };
  switch (fn) {
    case 'check':
      return { cost: fixed(350000) };
    case 'fieldSelector':
    case 'labelSelector':
      return args.length === 1 ? selectorEstimate(args[0].size) : undefined;
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf':
    case 'includes':
      return target ? listScanEstimate(fn, target, pathSize) : undefined;
    case 'url':
    case 'jsonpatch.escapeKey':
      return args.length === 1 ? { cost: factor(args[0].size, ST), resultSize: args[0].size } : undefined;
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim':
      return target ? { cost: factor(target.size, ST), resultSize: target.size } : undefined;
    case 'replace':
      return target && args.length >= 2 ? replaceEstimate(target.size, args[0].size, args[1].size) : undefined;
    case 'split':
      if (!target) return undefined;
      return { cost: factor(target.size, 2 * ST), resultSize: { min: 0, max: splitLimit(args[1]) ?? target.size.max } };
    case 'join':
      return target ? joinEstimate(target, args, pathSize) : undefined;
    case 'find':
    case 'findAll':
      if (!target || args.length < 1) return undefined;
      return { cost: mul(factor(add(target.size, ONE), ST), factor(args[0].size, COST.regexStringLength)), resultSize: { min: 0, max: target.size.max } };
    case 'cidr':
    case 'isIP':
    case 'isCIDR':
    case 'quantity':
    case 'isQuantity':
    case 'semver':
    case 'isSemver':
      return args.length >= 1 ? { cost: factor(args[0].size, ST) } : undefined;
    case 'ip':
      if (overload === 'cidr_ip') return { cost: ONE };
      return args.length >= 1 ? { cost: factor(args[0].size, ST) } : undefined;
    case 'ip.isCanonical':
      return args.length >= 1 ? { cost: factor(args[0].size, 2 * ST) } : undefined;
    case 'containsIP':
      return args.length >= 1 ? cidrEstimate(overload, args, false) : undefined;
    case 'containsCIDR':
      return args.length >= 1 ? cidrEstimate(overload, args, true) : undefined;
    case 'validate':
      return args.length >= 1 ? { cost: factor(factor(args[0].size, ST), 128 * COST.regexStringLength) } : undefined;
    case '_==_':
      return args.length === 2 ? equalsEstimate(args[0], args[1]) : undefined;
    default:
      return undefined;
  }
}

/** The integer literal limit of `split(sep, n)`, when literal (a negative one wraps around, as Go's uint64 conversion). */
function splitLimit(arg: Operand | undefined): number | undefined {
  if (typeof arg?.literal !== 'bigint') return undefined;
  return arg.literal < 0n ? MAX_UINT64 : Number(arg.literal);
}

/** cel-go's own estimates by overload (checker/cost.go functionCost), or undefined for O(1) functions. */
function celGoEstimate(overload: string, target: Operand | undefined, args: Operand[]): CallEstimate | undefined {
  switch (overload) {
    case 'string_format':
      return target ? { cost: factor(target.size, ST) } : undefined;
    case 'string_to_bytes':
      return args.length === 1 ? { cost: factor(args[0].size, ST), resultSize: { min: args[0].size.min, max: Math.min(MAX_UINT64, args[0].size.max * 4) } } : undefined;
    case 'bytes_to_string':
      return args.length === 1 ? { cost: factor(args[0].size, ST), resultSize: { min: Math.floor(args[0].size.min / 4), max: args[0].size.max } } : undefined;
    case 'strings_quote':
      return args.length === 1 ? { cost: factor(args[0].size, ST), resultSize: { min: args[0].size.min + 2, max: Math.min(MAX_UINT64, args[0].size.max * 2 + 2) } } : undefined;
    case 'starts_with_string':
    case 'ends_with_string':
      return args.length === 1 ? { cost: factor(args[0].size, ST) } : undefined;
    case 'in_list':
      return args.length === 2 ? { cost: factor(args[1].size, 1) } : undefined;
    case 'matches_string':
      return target && args.length === 1 ? { cost: mul(factor(add(target.size, ONE), ST), factor(args[0].size, COST.regexStringLength)) } : undefined;
    case 'contains_string':
      return target && args.length === 1 ? { cost: mul(factor(target.size, ST), factor(args[0].size, ST)) } : undefined;
    case 'add_string':
    case 'add_bytes':
    case 'add_list': {
      if (args.length !== 2) return undefined;
      const size = add(args[0].size, args[1].size);
      return { cost: overload === 'add_list' ? ONE : factor(size, ST), resultSize: size };
    }
    case 'compare_string':
    case 'compare_bytes':
    case 'equals':
    case 'not_equals': {
      const smallest = Math.min(args[0].size.max, args[1].size.max);
      return { cost: factor({ min: smallest > 0 ? 1 : 0, max: smallest }, ST) };
    }
    default:
      return undefined;
  }
}

/** cel-go's extension estimators (ext/sets.go). */
function extensionEstimate(overload: string, args: Operand[]): CallEstimate | undefined {
  const k = overload === 'list_sets_equivalent_list' ? 2 : overload === 'list_sets_contains_list' || overload === 'list_sets_intersects_list' ? 1 : 0;
  if (k === 0 || args.length !== 2) return undefined;
  return { cost: add(factor(mul(args[0].size, args[1].size), k), ONE) };
}

/**
 * The cost of calling `fn` (overload `overload`), operands' costs
 * included (`argCosts`, not the target's), and its result size when known.
 * Logical and/or charge the left side, plus the right side at most.
 */
export function functionCost(fn: string, overload: string, target: Operand | undefined, args: Operand[], argCosts: Range[], pathSize: PathSize): CallEstimate {
  const argSum = argCosts.reduce((s, c) => add(s, c), fixed(0));
  const ext = extensionEstimate(overload, args);
  if (ext) return { cost: add(ext.cost, argSum), resultSize: ext.resultSize };
  const k8s = kubernetesEstimate(fn, overload, target, args, pathSize);
  if (k8s) return { cost: add(k8s.cost, argSum), resultSize: k8s.resultSize };
  if (overload === 'logical_or' || overload === 'logical_and') return { cost: { min: argCosts[0].min, max: add(argCosts[0], argCosts[1]).max } };
  const own = celGoEstimate(overload, target, args);
  if (own) return { cost: add(own.cost, argSum), resultSize: own.resultSize };
  return { cost: add(ONE, argSum) };
}
