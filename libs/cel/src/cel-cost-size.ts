/**
 * The arithmetic and the types of static CEL cost estimation, after
 * cel-go's checker (checker/cost.go): cost and size ranges that saturate at
 * uint64's largest value instead of overflowing, and the declared types
 * (with their size bounds) that variables such as a CRD rule's `self` have.
 * Numbers are doubles: every figure a limit is compared with (up to 10^8)
 * is exact, and larger ones only need to stay large.
 */

/** Upstream MaxRequestSizeBytes (3 MiB): what bounds a value no maxLength, maxItems or maxProperties bounds. */
export const CEL_MAX_REQUEST_BYTES = 3 * 1024 * 1024;

/** uint64's largest value, where cel-go's estimates saturate (as a double, 2^64). */
export const MAX_UINT64 = 18446744073709551615;
const TWO_TO_64 = 2 ** 64;

/** A range of sizes (string length, list or map entries) or of costs. */
export interface Range {
  readonly min: number;
  readonly max: number;
}

/** The range of exactly `n`. */
export function fixed(n: number): Range {
  return { min: n, max: n };
}

/** A size nothing is known about: 0 to uint64's largest. */
export const UNKNOWN: Range = { min: 0, max: MAX_UINT64 };

function addU(x: number, y: number): number {
  return Math.min(MAX_UINT64, x + y);
}

function mulU(x: number, y: number): number {
  return x === 0 || y === 0 ? 0 : Math.min(MAX_UINT64, x * y);
}

/** `x * factor` rounded up, saturating (cel-go multiplyByCostFactor). */
function byFactor(x: number, factor: number): number {
  if (x > 0 && factor > 0 && x > MAX_UINT64 / factor) return MAX_UINT64;
  const ceil = Math.ceil(x * factor);
  return ceil >= TWO_TO_64 ? MAX_UINT64 : ceil;
}

/** Sum of two ranges, saturating. */
export function add(a: Range, b: Range): Range {
  return { min: addU(a.min, b.min), max: addU(a.max, b.max) };
}

/** Product of two ranges, saturating. */
export function mul(a: Range, b: Range): Range {
  return { min: mulU(a.min, b.min), max: mulU(a.max, b.max) };
}

/** A range times a cost factor such as 0.1 per character, rounded up. */
export function factor(a: Range, f: number): Range {
  return { min: byFactor(a.min, f), max: byFactor(a.max, f) };
}

/** The smallest range covering both. */
export function union(a: Range, b: Range): Range {
  return { min: Math.min(a.min, b.min), max: Math.max(a.max, b.max) };
}

/** Product of two counts, saturating at uint64's largest (apiextensions' multiplyWithOverflowGuard). */
export function multiplySaturating(a: number, b: number): number {
  return mulU(a, b);
}

/** Sum of two counts, saturating at uint64's largest. */
export function addSaturating(a: number, b: number): number {
  return addU(a, b);
}

/** cel-go's cost constants (common/cost.go). */
export const COST = {
  selectAndIdent: 1,
  constant: 0,
  listCreate: 10,
  mapCreate: 30,
  structCreate: 40,
  stringTraversal: 0.1,
  regexStringLength: 0.25,
} as const;

/** The kinds of CEL types the estimator distinguishes. */
export type CelKind =
  | 'bool'
  | 'int'
  | 'uint'
  | 'double'
  | 'string'
  | 'bytes'
  | 'timestamp'
  | 'duration'
  | 'null'
  | 'dyn'
  | 'list'
  | 'map'
  | 'object'
  | 'optional'
  | 'opaque'
  | 'type';

/** A CEL type: lists and optionals have `elem`, maps `key` and `elem`, objects `fields`, opaque types a `name` (IP, CIDR, Quantity, URL…). */
export interface CelType {
  readonly kind: CelKind;
  readonly elem?: CelType;
  readonly key?: CelType;
  readonly fields?: ReadonlyMap<string, CelType>;
  readonly name?: string;
}

/**
 * A declared type with its size bounds, as apiserver's cel.DeclType:
 * `maxElements` is the most characters, bytes, items or entries a value
 * may have (0 for objects and numbers), `minSerializedSize` the fewest
 * bytes of its JSON. Field names are escaped CEL names.
 */
export interface DeclType extends CelType {
  readonly elem?: DeclType;
  readonly key?: DeclType;
  readonly fields?: ReadonlyMap<string, DeclType>;
  readonly maxElements: number;
  readonly minSerializedSize: number;
}

/** Shorthand for a type without parameters. */
export function simple(kind: CelKind, name?: string): CelType {
  return name ? { kind, name } : { kind };
}

/** `list<elem>` */
export function listOf(elem: CelType): CelType {
  return { kind: 'list', elem };
}

/** True for the types cel-go sizes as 1 without looking (checker isScalar). */
export function isScalar(t: CelType): boolean {
  switch (t.kind) {
    case 'bool':
    case 'double':
    case 'duration':
    case 'int':
    case 'timestamp':
    case 'uint':
      return true;
    case 'optional':
      return t.elem !== undefined && isScalar(t.elem);
    default:
      return false;
  }
}
