import { goQuote } from '@plinth/apimachinery';

/**
 * Semantic versions as Kubernetes' CEL `semver` library has them: the
 * parse, order and normalization of github.com/blang/semver/v4, which
 * upstream uses, with its error texts (they reach users in CRD rule and
 * admission policy errors). Written here rather than taken from npm's
 * `semver`, which differs where it shows: it accepts a leading `v` and
 * surrounding spaces in strict mode, refuses numbers above 2^53 − 1 and
 * strings over 256 characters, and words its errors otherwise.
 */

const MAX_UINT64 = (1n << 64n) - 1n;
const DIGITS = /^[0-9]*$/;
const ALPHANUMERIC = /^[0-9A-Za-z-]*$/;

/** A version string that is not a semantic version; `message` is blang/semver's. */
export class SemverParseError extends Error {}

/** One dot-separated pre-release identifier: numeric (compared as a number) or alphanumeric. */
interface PreRelease {
  readonly num?: bigint;
  readonly str: string;
}

/** Go's strconv.ParseUint(s, 10, 64) on a string of ASCII digits only (possibly empty). */
function parseUint(s: string): bigint {
  if (s === '') throw new SemverParseError(`strconv.ParseUint: parsing ${goQuote(s)}: invalid syntax`);
  const v = BigInt(s);
  if (v > MAX_UINT64) throw new SemverParseError(`strconv.ParseUint: parsing ${goQuote(s)}: value out of range`);
  return v;
}

function hasLeadingZeroes(s: string): boolean {
  return s.length > 1 && s[0] === '0';
}

/** Go's strings.SplitN(s, ".", 3). */
function splitCore(s: string): string[] {
  const first = s.indexOf('.');
  if (first < 0) return [s];
  const second = s.indexOf('.', first + 1);
  if (second < 0) return [s.slice(0, first), s.slice(first + 1)];
  return [s.slice(0, first), s.slice(first + 1, second), s.slice(second + 1)];
}

function numberPart(s: string, which: 'major' | 'minor' | 'patch'): bigint {
  const title = which.charAt(0).toUpperCase() + which.slice(1);
  if (!DIGITS.test(s)) throw new SemverParseError(`Invalid character(s) found in ${which} number ${goQuote(s)}`);
  if (hasLeadingZeroes(s)) throw new SemverParseError(`${title} number must not contain leading zeroes ${goQuote(s)}`);
  return parseUint(s);
}

function preRelease(s: string): PreRelease {
  if (s === '') throw new SemverParseError('Prerelease is empty');
  if (DIGITS.test(s)) {
    if (hasLeadingZeroes(s)) throw new SemverParseError(`Numeric PreRelease version must not contain leading zeroes ${goQuote(s)}`);
    return { num: parseUint(s), str: s };
  }
  if (ALPHANUMERIC.test(s)) return { str: s };
  throw new SemverParseError(`Invalid character(s) found in prerelease ${goQuote(s)}`);
}

function comparePre(a: PreRelease, b: PreRelease): number {
  if (a.num !== undefined && b.num !== undefined) return a.num === b.num ? 0 : a.num > b.num ? 1 : -1;
  if (a.num !== undefined) return -1;
  if (b.num !== undefined) return 1;
  // Go compares strings byte-wise; identifiers are ASCII, so code units order the same.
  return a.str === b.str ? 0 : a.str > b.str ? 1 : -1;
}

function compareUint(a: bigint, b: bigint): number {
  return a === b ? 0 : a > b ? 1 : -1;
}

/** CEL `kubernetes.Semver`: an immutable parsed version. */
export class CelSemver {
  private constructor(
    /** Unsigned 64-bit, as blang/semver keeps them. */
    readonly major: bigint,
    readonly minor: bigint,
    readonly patch: bigint,
    private readonly pre: readonly PreRelease[],
    private readonly build: readonly string[],
  ) {}

  /**
   * blang/semver's Parse: `MAJOR.MINOR.PATCH[-PRE][+BUILD]`, nothing
   * around it, no leading `v`, no leading zeroes in numbers. Throws
   * SemverParseError with blang's message (`No Major.Minor.Patch elements
   * found`, `Invalid character(s) found in major number "x"`, …).
   */
  static parse(s: string): CelSemver {
    if (s.length === 0) throw new SemverParseError('Version string empty');
    const parts = splitCore(s);
    if (parts.length !== 3) throw new SemverParseError('No Major.Minor.Patch elements found');
    const major = numberPart(parts[0], 'major');
    const minor = numberPart(parts[1], 'minor');
    let patchText = parts[2];
    let build: string[] = [];
    let pre: string[] = [];
    const plus = patchText.indexOf('+');
    if (plus >= 0) {
      build = patchText.slice(plus + 1).split('.');
      patchText = patchText.slice(0, plus);
    }
    const dash = patchText.indexOf('-');
    if (dash >= 0) {
      pre = patchText.slice(dash + 1).split('.');
      patchText = patchText.slice(0, dash);
    }
    const patch = numberPart(patchText, 'patch');
    const preRel = pre.map(preRelease);
    for (const b of build) {
      if (b === '') throw new SemverParseError('Build meta data is empty');
      if (!ALPHANUMERIC.test(b)) throw new SemverParseError(`Invalid character(s) found in build meta data ${goQuote(b)}`);
    }
    return new CelSemver(major, minor, patch, preRel, build);
  }

  /**
   * Upstream's normalizeAndParse (the `normalize` argument): drops one
   * leading `v`, strips leading zeroes of each of the three dot-separated
   * parts, fills a missing minor and patch with 0, then parses strictly.
   * Unlike blang's ParseTolerant it does not trim spaces. Throws
   * SemverParseError (`short version cannot contain PreRelease/Build meta
   * data` for `1.2-rc`).
   */
  static normalizeAndParse(s: string): CelSemver {
    const parts = splitCore(s.startsWith('v') ? s.slice(1) : s).map((p) => {
      if (p.length <= 1) return p;
      const trimmed = p.replace(/^0+/, '');
      return trimmed.length === 0 || !/^[0-9]/.test(trimmed) ? `0${trimmed}` : trimmed;
    });
    if (parts.length < 3) {
      if (/[+-]/.test(parts[parts.length - 1])) throw new SemverParseError('short version cannot contain PreRelease/Build meta data');
      while (parts.length < 3) parts.push('0');
    }
    return CelSemver.parse(parts.join('.'));
  }

  /** Parses strictly, or normalizing first when `normalize`; undefined instead of throwing. */
  static tryParse(s: string, normalize = false): CelSemver | undefined {
    try {
      return normalize ? CelSemver.normalizeAndParse(s) : CelSemver.parse(s);
    } catch (err) {
      if (err instanceof SemverParseError) return undefined;
      throw err;
    }
  }

  /** -1, 0 or 1 by SemVer precedence (build metadata ignored), as blang's Compare. */
  compareTo(o: CelSemver): number {
    const core = compareUint(this.major, o.major) || compareUint(this.minor, o.minor) || compareUint(this.patch, o.patch);
    if (core !== 0) return core;
    if (this.pre.length === 0 || o.pre.length === 0) return Math.sign(o.pre.length - this.pre.length);
    const n = Math.min(this.pre.length, o.pre.length);
    for (let i = 0; i < n; i++) {
      const c = comparePre(this.pre[i], o.pre[i]);
      if (c !== 0) return c;
    }
    return Math.sign(this.pre.length - o.pre.length);
  }

  /** The canonical text (`1.2.3-rc.1+build`), as blang's String. */
  toString(): string {
    let s = `${this.major}.${this.minor}.${this.patch}`;
    if (this.pre.length > 0) s += `-${this.pre.map((p) => (p.num !== undefined ? p.num.toString() : p.str)).join('.')}`;
    if (this.build.length > 0) s += `+${this.build.join('.')}`;
    return s;
  }
}
