import { isIPv4, isIPv6 } from 'node:net';

/**
 * Values of Kubernetes' CEL `url`, `ip` and `cidr` libraries, parsed the
 * way Go's net/url.ParseRequestURI and net/netip do (no zones, no leading
 * zeros in IPv4 octets), and compared as upstream's ref.Val Equal does.
 */

// ParseRequestURI does not cut a fragment: a `#` belongs to the path or the query.
const URL_RE = /^([a-zA-Z][a-zA-Z0-9+.-]*):(?:\/\/([^/?]*))?([^?]*)(?:\?(.*))?$/s;

const HEX = '0123456789ABCDEF';

/** Go's shouldEscape(c, encodePath): everything but letters, digits and `-_.~$&+,/:;=@`. */
function pathByteNeedsEscape(c: number): boolean {
  if ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) return false;
  return c >= 0x80 || !'-_.~$&+,/:;=@'.includes(String.fromCharCode(c));
}

/** Go's validEncoded(s, encodePath): no byte of `s` would be escaped (sub-delims, `[]` and `%` allowed). */
function validEncodedPath(bytes: Uint8Array): boolean {
  return bytes.every((c) => (c < 0x80 && "!$&'()*+,;=:@[]%".includes(String.fromCharCode(c))) || !pathByteNeedsEscape(c));
}

/** Go's URL.EscapedPath() for a path given as written: itself when validly encoded, else re-escaped from its bytes. */
function goEscapedPath(raw: string): string {
  const bytes = Buffer.from(raw, 'utf8');
  if (validEncodedPath(bytes)) return raw;
  const decoded: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0x25 && i + 2 < bytes.length && /^[0-9a-fA-F]{2}$/.test(String.fromCharCode(bytes[i + 1], bytes[i + 2]))) {
      decoded.push(parseInt(String.fromCharCode(bytes[i + 1], bytes[i + 2]), 16));
      i += 2;
    } else decoded.push(bytes[i]);
  }
  return decoded.map((c) => (pathByteNeedsEscape(c) ? `%${HEX[c >> 4]}${HEX[c & 15]}` : String.fromCharCode(c))).join('');
}

/** A parsed request URI. */
export class CelUrl {
  constructor(
    readonly scheme: string,
    readonly host: string,
    readonly path: string,
    readonly rawQuery: string,
    /** A `?` with nothing after it (Go's ForceQuery). */
    readonly forceQuery = false,
  ) {}

  /** Parses like url.ParseRequestURI; throws Error with a Go-like message. */
  static parse(s: string): CelUrl {
    if (s === '') throw new Error('parse "": empty url');
    if (/[\x00-\x1f\x7f]/.test(s)) throw new Error(`parse ${JSON.stringify(s)}: net/url: invalid control character in URL`);
    if (s.startsWith('/')) {
      const q = s.indexOf('?');
      const path = q < 0 ? s : s.slice(0, q);
      checkEscapes(s, path);
      return new CelUrl('', '', path, q < 0 ? '' : s.slice(q + 1), q === s.length - 1);
    }
    const m = URL_RE.exec(s);
    if (!m) throw new Error(`parse ${JSON.stringify(s)}: invalid URI for request`);
    const [, scheme, host, path, query] = m;
    if (host === undefined && !path.startsWith('/')) throw new Error(`parse ${JSON.stringify(s)}: invalid URI for request`);
    if (host !== undefined && /[\s<>"{}|\\^`#]/.test(host)) throw new Error(`parse ${JSON.stringify(s)}: invalid character in host name`);
    checkEscapes(s, path);
    return new CelUrl(scheme, host ?? '', path, query ?? '', query === '');
  }

  /**
   * The URL as Go's URL.String() writes it: scheme in lower case, host and
   * query as written, the path as EscapedPath(). Upstream's URL equality
   * compares these strings.
   */
  toString(): string {
    let out = this.scheme === '' ? '' : `${this.scheme.toLowerCase()}:`;
    if (this.scheme !== '' || this.host !== '') out += `${this.host !== '' || this.path !== '' ? '//' : ''}${this.host}`;
    out += this.escapedPath();
    if (this.forceQuery || this.rawQuery !== '') out += `?${this.rawQuery}`;
    return out;
  }

  /** Upstream's URL Equal: the same String(). */
  equals(other: CelUrl): boolean {
    return this.toString() === other.toString();
  }

  hostname(): string {
    const h = this.host.replace(/^[^@]*@/, '');
    if (h.startsWith('[')) return h.slice(1, h.indexOf(']'));
    const colon = h.lastIndexOf(':');
    return colon < 0 ? h : h.slice(0, colon);
  }

  port(): string {
    const h = this.host.replace(/^[^@]*@/, '');
    const m = /:(\d*)$/.exec(h.startsWith('[') ? h.slice(h.indexOf(']') + 1) : h);
    return m ? m[1] : '';
  }

  /** Go's URL.EscapedPath(): the path as written when validly encoded, else escaped afresh. */
  escapedPath(): string {
    return goEscapedPath(this.path);
  }

  query(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    if (!this.rawQuery) return out;
    for (const [k, v] of new URLSearchParams(this.rawQuery)) (out[k] ??= []).push(v);
    return out;
  }
}

/** Go's unescape(path, encodePath): each `%` must start two hex digits (`invalid URL escape "%zz"`). */
function checkEscapes(s: string, path: string): void {
  const bad = /%(?![0-9a-fA-F]{2})/.exec(path);
  if (bad) throw new Error(`parse ${JSON.stringify(s)}: invalid URL escape ${JSON.stringify(path.slice(bad.index, bad.index + 3))}`);
}

function v4ToBigInt(s: string): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let v = 0n;
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > 255) return undefined;
    v = (v << 8n) | BigInt(p);
  }
  return v;
}

function v6ToBigInt(s: string): bigint | undefined {
  if (!isIPv6(s) || s.includes('%')) return undefined;
  let text = s;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = v4ToBigInt(v4[1]);
    if (n === undefined) return undefined;
    text = `${text.slice(0, -v4[1].length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  if (groups.length !== 8) return undefined;
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(`0x${g || '0'}`), 0n);
}

/** An IP address (v4 or v6) as a number. */
export class CelIp {
  constructor(
    readonly family: 4 | 6,
    readonly value: bigint,
  ) {}

  static tryParse(s: string): CelIp | undefined {
    if (isIPv4(s)) {
      const v = v4ToBigInt(s);
      return v === undefined ? undefined : new CelIp(4, v);
    }
    const v = v6ToBigInt(s);
    return v === undefined ? undefined : new CelIp(6, v);
  }

  static parse(s: string): CelIp {
    const ip = CelIp.tryParse(s);
    if (!ip) throw new Error(`IP Address ${JSON.stringify(s)} parse error during conversion from string: ParseAddr(${JSON.stringify(s)}): unable to parse IP`);
    return ip;
  }

  /**
   * Upstream's IP Equal (netip.Addr ==): the same family and address, so an
   * IPv4 address differs from its IPv4-mapped IPv6 form (`::ffff:1.2.3.4`).
   */
  equals(other: CelIp): boolean {
    return this.family === other.family && this.value === other.value;
  }

  private inRange(prefix: bigint, bits: number): boolean {
    const width = this.family === 4 ? 32 : 128;
    return this.value >> BigInt(width - bits) === prefix >> BigInt(width - bits);
  }

  isUnspecified(): boolean {
    return this.value === 0n;
  }

  isLoopback(): boolean {
    return this.family === 4 ? this.inRange(0x7f000000n, 8) : this.value === 1n;
  }

  isLinkLocalMulticast(): boolean {
    return this.family === 4 ? this.inRange(0xe0000000n, 24) : this.inRange(0xff02n << 112n, 16);
  }

  isLinkLocalUnicast(): boolean {
    return this.family === 4 ? this.inRange(0xa9fe0000n, 16) : this.inRange(0xfe80n << 112n, 10);
  }

  isGlobalUnicast(): boolean {
    const multicast = this.family === 4 ? this.inRange(0xe0000000n, 4) : this.inRange(0xffn << 120n, 8);
    const broadcast = this.family === 4 && this.value === 0xffffffffn;
    return !(this.isUnspecified() || this.isLoopback() || multicast || this.isLinkLocalUnicast() || broadcast);
  }

  toString(): string {
    if (this.family === 4) return [24n, 16n, 8n, 0n].map((s) => String((this.value >> s) & 0xffn)).join('.');
    const groups = Array.from({ length: 8 }, (_, i) => Number((this.value >> BigInt(112 - i * 16)) & 0xffffn));
    let best = -1;
    let bestLen = 1;
    for (let i = 0; i < 8; ) {
      let j = i;
      while (j < 8 && groups[j] === 0) j++;
      if (j - i > bestLen) [best, bestLen] = [i, j - i];
      i = j === i ? i + 1 : j;
    }
    const hex = groups.map((g) => g.toString(16));
    if (best < 0) return hex.join(':');
    return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
  }
}

/** A CIDR prefix. */
export class CelCidr {
  constructor(
    readonly ip: CelIp,
    readonly bits: number,
  ) {}

  static tryParse(s: string): CelCidr | undefined {
    const slash = s.indexOf('/');
    if (slash < 0) return undefined;
    const ip = CelIp.tryParse(s.slice(0, slash));
    const bitsText = s.slice(slash + 1);
    if (!ip || !/^(0|[1-9][0-9]*)$/.test(bitsText)) return undefined;
    const bits = Number(bitsText);
    if (bits > (ip.family === 4 ? 32 : 128)) return undefined;
    return new CelCidr(ip, bits);
  }

  static parse(s: string): CelCidr {
    const c = CelCidr.tryParse(s);
    if (!c) throw new Error(`network address parse error during conversion from string: netip.ParsePrefix(${JSON.stringify(s)}): invalid prefix`);
    return c;
  }

  /**
   * Upstream's CIDR Equal (netip.Prefix ==): the same address as written and
   * the same prefix length; not masked, so `10.0.0.1/8` differs from `10.0.0.0/8`.
   */
  equals(other: CelCidr): boolean {
    return this.bits === other.bits && this.ip.equals(other.ip);
  }

  private mask(v: bigint): bigint {
    const width = this.ip.family === 4 ? 32 : 128;
    return (v >> BigInt(width - this.bits)) << BigInt(width - this.bits);
  }

  containsIp(ip: CelIp): boolean {
    return ip.family === this.ip.family && this.mask(ip.value) === this.mask(this.ip.value);
  }

  containsCidr(other: CelCidr): boolean {
    return other.ip.family === this.ip.family && other.bits >= this.bits && this.containsIp(other.ip);
  }

  masked(): CelCidr {
    return new CelCidr(new CelIp(this.ip.family, this.mask(this.ip.value)), this.bits);
  }

  toString(): string {
    return `${this.ip.toString()}/${this.bits}`;
  }
}
