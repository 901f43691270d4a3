import type { Environment } from '@marcbachmann/cel-js';
import { chargeCost } from './cel-metering.js';
import { CelSemver, SemverParseError } from './cel-semver.js';

/**
 * Kubernetes' CEL `semver` library (k8s.io/apiserver pkg/cel/library
 * semverlib.go), part of the base environment since 1.33 at library
 * version 1 (the `normalize` overloads included):
 *
 *   semver(string) Semver             isSemver(string) bool
 *   semver(string, bool) Semver       isSemver(string, bool) bool
 *   Semver.major() / minor() / patch() int
 *   Semver.isGreaterThan(Semver) / isLessThan(Semver) bool
 *   Semver.compareTo(Semver) int      Semver == Semver, Semver != Semver
 *
 * `semver()` of an invalid string is an evaluation error with blang/semver's
 * message; equality is by precedence (build metadata ignored).
 */

/** cel-go's StringTraversalCostFactor. */
const STRING_TRAVERSAL_COST = 0.1;

/**
 * Charges upstream's runtime cost of parsing `s` (library/cost.go CallCost:
 * a tenth of its length in code points, rounded up), less the one step the
 * call node already counted.
 */
function chargeParse(s: string): void {
  let length = 0;
  for (const _ of s) length++;
  const cost = Math.ceil(length * STRING_TRAVERSAL_COST);
  if (cost > 1) chargeCost(cost - 1);
}

function toSemver(s: string, normalize: boolean): CelSemver {
  chargeParse(s);
  try {
    return normalize ? CelSemver.normalizeAndParse(s) : CelSemver.parse(s);
  } catch (err) {
    // cel-go reports a wrapped Go error by its text alone.
    if (err instanceof SemverParseError) throw new Error(err.message);
    throw err;
  }
}

function isSemver(s: string, normalize: boolean): boolean {
  chargeParse(s);
  return CelSemver.tryParse(s, normalize) !== undefined;
}

/** Registers the Semver type and its functions on `env` (before the environment is used). */
export function registerSemverLibrary(env: Environment): void {
  env.registerType('Semver', CelSemver);
  env.registerFunction('semver(string): Semver', (s: string) => toSemver(s, false));
  env.registerFunction('semver(string, bool): Semver', (s: string, normalize: boolean) => toSemver(s, normalize));
  env.registerFunction('isSemver(string): bool', (s: string) => isSemver(s, false));
  env.registerFunction('isSemver(string, bool): bool', (s: string, normalize: boolean) => isSemver(s, normalize));
  // Go's types.Int(uint64) wraps above 2^63 - 1; so does this.
  env.registerFunction('Semver.major(): int', (v: CelSemver) => BigInt.asIntN(64, v.major));
  env.registerFunction('Semver.minor(): int', (v: CelSemver) => BigInt.asIntN(64, v.minor));
  env.registerFunction('Semver.patch(): int', (v: CelSemver) => BigInt.asIntN(64, v.patch));
  env.registerFunction('Semver.isGreaterThan(Semver): bool', (a: CelSemver, b: CelSemver) => a.compareTo(b) > 0);
  env.registerFunction('Semver.isLessThan(Semver): bool', (a: CelSemver, b: CelSemver) => a.compareTo(b) < 0);
  env.registerFunction('Semver.compareTo(Semver): int', (a: CelSemver, b: CelSemver) => BigInt(a.compareTo(b)));
  env.registerOperator('Semver == Semver', (a: CelSemver, b: CelSemver) => a.compareTo(b) === 0);
}
