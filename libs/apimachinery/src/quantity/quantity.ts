/**
 * resource.Quantity as CEL's quantity library sees it: an exact rational
 * value parsed from Kubernetes quantity syntax (`100m`, `1.5Gi`, `2e3`),
 * compared and added exactly with BigInt arithmetic.
 */

const QUANTITY_RE = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const DECIMAL_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x === 0n ? 1n : x;
}

/** An exact quantity value num/den (den > 0), as parsed from its text. */
export class Quantity {
  readonly num: bigint;
  readonly den: bigint;

  constructor(num: bigint, den: bigint, readonly text: string) {
    const g = gcd(num, den);
    this.num = num / g;
    this.den = den / g;
  }

  /** Parses Kubernetes quantity syntax; throws Error with upstream's message for bad input. */
  static parse(text: string): Quantity {
    const m = QUANTITY_RE.exec(text);
    if (!m || text.length === 0) throw new Error('quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'');
    const [, numberPart, suffix] = m;
    const sign = numberPart.startsWith('-') ? -1n : 1n;
    const digits = numberPart.replace(/^[+-]/, '');
    const parts = digits.split('.');
    if (parts.length > 2 || digits === '.' || digits === '') throw new Error('unable to parse quantity\'s suffix');
    const whole = parts[0] || '0';
    const frac = parts[1] ?? '';
    let num = BigInt(whole + frac) * sign;
    let den = 10n ** BigInt(frac.length);
    if (Object.hasOwn(BINARY_SUFFIX, suffix)) {
      num *= 1n << BigInt(BINARY_SUFFIX[suffix]);
    } else if (Object.hasOwn(DECIMAL_SUFFIX, suffix)) {
      const e = DECIMAL_SUFFIX[suffix];
      if (e >= 0) num *= 10n ** BigInt(e);
      else den *= 10n ** BigInt(-e);
    } else if (/^[eE][-+]?[0-9]+$/.test(suffix)) {
      const e = Number(suffix.slice(1));
      if (Math.abs(e) > 1000) throw new Error('unable to parse quantity\'s suffix');
      if (e >= 0) num *= 10n ** BigInt(e);
      else den *= 10n ** BigInt(-e);
    } else {
      throw new Error('unable to parse quantity\'s suffix');
    }
    return new Quantity(num, den, text);
  }

  /** -1, 0 or 1 by the order of this and `other`. */
  compareTo(other: Quantity): number {
    const l = this.num * other.den;
    const r = other.num * this.den;
    return l < r ? -1 : l > r ? 1 : 0;
  }

  sign(): number {
    return this.num < 0n ? -1 : this.num > 0n ? 1 : 0;
  }

  /** True when the value is integral and fits int64. */
  isInteger(): boolean {
    if (this.num % this.den !== 0n) return false;
    const v = this.num / this.den;
    return v >= INT64_MIN && v <= INT64_MAX;
  }

  /** The integral value; throws when it is not an int64. */
  asInteger(): bigint {
    if (!this.isInteger()) throw new Error('cannot convert value to integer');
    return this.num / this.den;
  }

  asApproximateFloat(): number {
    return Number(this.num) / Number(this.den);
  }

  add(other: Quantity): Quantity {
    return new Quantity(this.num * other.den + other.num * this.den, this.den * other.den, '');
  }

  sub(other: Quantity): Quantity {
    return new Quantity(this.num * other.den - other.num * this.den, this.den * other.den, '');
  }

  /** A canonical-ish text (the original when unchanged). */
  toString(): string {
    if (this.text) return this.text;
    if (this.den === 1n) return this.num.toString();
    const milli = (this.num * 1000n) / this.den;
    return (milli * this.den === this.num * 1000n) ? `${milli}m` : String(this.asApproximateFloat());
  }

  /** Quantity from an int. */
  static fromInt(v: bigint): Quantity {
    return new Quantity(v, 1n, v.toString());
  }
}
