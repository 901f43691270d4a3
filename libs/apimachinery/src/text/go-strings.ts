/** Characters Go's unicode.IsPrint accepts: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const GO_PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
/** Go's short escapes in strconv.Quote. */
const GO_SHORT_ESCAPES: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 0x22: '\\"', 0x5c: '\\\\' };

/**
 * Quotes `s` as Go's `strconv.Quote` (and `%q`) does; upstream renders
 * names, field paths, keys and selector values with it: `a"b` → `"a\"b"`,
 * a tab → `"\t"`, U+007F → `"\x7f"`, a non-printable rune → `\u…`/`\U…`.
 * A lone surrogate becomes U+FFFD, as Go's JSON decoder would have made
 * it before the quoting. Pure; never throws.
 */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    const short = GO_SHORT_ESCAPES[cp];
    if (short !== undefined) out += short;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\ufffd';
    else if (GO_PRINTABLE.test(ch)) out += ch;
    else if (cp < 0x80) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

/** True for a code point Go's unicode.IsPrint accepts. Pure. */
export function isGoPrintable(codePoint: number): boolean {
  return GO_PRINTABLE.test(String.fromCodePoint(codePoint));
}

/**
 * Go's string order (byte-wise over UTF-8), independent of the host's
 * locale; for UTF-16 code units below the surrogates it is JavaScript's
 * `<`. For sort callbacks. Pure.
 */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
