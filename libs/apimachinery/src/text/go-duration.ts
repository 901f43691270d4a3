/** Nanoseconds per unit of Go's time.ParseDuration (`µs` as U+00B5 micro sign and U+03BC Greek mu). */
const UNITS: Record<string, bigint> = { ns: 1n, us: 1_000n, '\u00b5s': 1_000n, '\u03bcs': 1_000n, ms: 1_000_000n, s: 1_000_000_000n, m: 60_000_000_000n, h: 3_600_000_000_000n };

/** The largest int64: a time.Duration cannot exceed it (its negative may reach one more). */
const MAX_INT64 = (1n << 63n) - 1n;

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

/**
 * Go's time package quoting of the text in its errors (its own `quote`, not
 * strconv.Quote's: see go-strings.ts): within double quotes, `"` and
 * `\` escaped, every byte of a non-ASCII or control character as `\xNN`.
 */
function timeQuote(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (code < 0x20 || code >= 0x80) {
      for (const b of Buffer.from(ch, 'utf8')) out += `\\x${b.toString(16).padStart(2, '0')}`;
    } else out += ch === '"' || ch === '\\' ? `\\${ch}` : ch;
  }
  return `${out}"`;
}

/**
 * Parses a Go duration (`1m0s`, `1.5h`, `-2s`, `+.5ms`, `0`) into whole
 * nanoseconds, with Go's time.ParseDuration semantics: an optional sign,
 * then one or more decimal numbers each with a unit (ns, us, µs, ms, s, m,
 * h); a bare `0` needs no unit; the total must fit an int64 (the negative
 * one more), else it is invalid; fractional digits past int64 precision are
 * dropped, and a fraction's nanoseconds are truncated toward zero. Throws
 * an Error whose message is Go's (`time: invalid duration "x"`, `time:
 * missing unit in duration "1"`, `time: unknown unit "d" in duration
 * "1d"`). A scan, no regex: the text is a client's. Pure.
 */
export function parseGoDurationNanos(text: string): bigint {
  const quoted = timeQuote(text);
  const invalid = () => new Error(`time: invalid duration ${quoted}`);
  let i = 0;
  let negative = false;
  if (text[0] === '-' || text[0] === '+') {
    negative = text[0] === '-';
    i = 1;
  }
  if (text.slice(i) === '0') return 0n;
  if (i === text.length) throw invalid();
  let total = 0n;
  while (i < text.length) {
    if (text[i] !== '.' && !isDigit(text[i])) throw invalid();
    const wholeStart = i;
    let whole = 0n;
    while (isDigit(text[i])) {
      whole = whole * 10n + BigInt(text.charCodeAt(i) - 48);
      if (whole > 1n << 63n) throw invalid();
      i++;
    }
    const hasWhole = i > wholeStart;
    let frac = 0n;
    let scale = 1;
    let hasFrac = false;
    if (text[i] === '.') {
      i++;
      const fracStart = i;
      let overflowed = false;
      while (isDigit(text[i])) {
        // Digits beyond int64 precision change nothing (Go drops them too).
        const next = frac * 10n + BigInt(text.charCodeAt(i) - 48);
        if (!overflowed && next <= MAX_INT64) {
          frac = next;
          scale *= 10;
        } else overflowed = true;
        i++;
      }
      hasFrac = i > fracStart;
    }
    if (!hasWhole && !hasFrac) throw invalid();
    const unitStart = i;
    while (i < text.length && text[i] !== '.' && !isDigit(text[i])) i++;
    const unitText = text.slice(unitStart, i);
    if (unitText === '') throw new Error(`time: missing unit in duration ${quoted}`);
    const unit = UNITS[unitText];
    if (unit === undefined) throw new Error(`time: unknown unit ${timeQuote(unitText)} in duration ${quoted}`);
    if (whole > (1n << 63n) / unit) throw invalid();
    let v = whole * unit;
    if (frac > 0n) {
      // As Go: the fraction in floating point, truncated toward zero.
      v += BigInt(Math.trunc(Number(frac) * (Number(unit) / scale)));
      if (v > 1n << 63n) throw invalid();
    }
    total += v;
    if (total > 1n << 63n) throw invalid();
  }
  if (negative) return -total;
  if (total > MAX_INT64) throw invalid();
  return total;
}

/**
 * {@link parseGoDurationNanos} in milliseconds (fractions of a millisecond
 * kept, as a JavaScript number). Throws Go's errors. Pure.
 */
export function parseGoDuration(text: string): number {
  return Number(parseGoDurationNanos(text)) / 1e6;
}
