/** Nanoseconds per unit of Go's time.ParseDuration. */
const UNITS: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}

/**
 * Parses a Go duration (`1m0s`, `1.5h`, `-2s`, `0`) into milliseconds, as
 * time.ParseDuration reads it (a scan, no regex: the text is a client's).
 * Throws an Error whose message is Go's (`time: invalid duration "x"`,
 * `time: missing unit in duration "1"`, `time: unknown unit "d" in
 * duration "1d"`). Pure.
 */
export function parseGoDuration(text: string): number {
  const quoted = JSON.stringify(text);
  const invalid = () => new Error(`time: invalid duration ${quoted}`);
  let i = 0;
  let sign = 1;
  if (text[0] === '-' || text[0] === '+') {
    sign = text[0] === '-' ? -1 : 1;
    i = 1;
  }
  if (text.slice(i) === '0') return 0;
  if (i === text.length) throw invalid();
  let totalNs = 0;
  while (i < text.length) {
    const start = i;
    while (i < text.length && isDigit(text[i])) i++;
    const whole = text.slice(start, i);
    let frac = '';
    if (text[i] === '.') {
      i++;
      const f = i;
      while (i < text.length && isDigit(text[i])) i++;
      frac = text.slice(f, i);
    }
    if (whole === '' && frac === '') throw invalid();
    const u = i;
    while (i < text.length && !isDigit(text[i]) && text[i] !== '.') i++;
    const unit = text.slice(u, i);
    if (unit === '') throw new Error(`time: missing unit in duration ${quoted}`);
    const scale = UNITS[unit];
    if (scale === undefined) throw new Error(`time: unknown unit ${JSON.stringify(unit)} in duration ${quoted}`);
    totalNs += Number(`${whole || '0'}.${frac || '0'}`) * scale;
    if (!Number.isFinite(totalNs) || totalNs > 2 ** 63) throw invalid();
  }
  return (sign * totalNs) / 1e6;
}
