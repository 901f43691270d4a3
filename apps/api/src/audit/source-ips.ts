import { isIPv6 } from 'node:net';

/**
 * `text` as Go's net.IP prints it, or undefined when upstream's
 * netutils.ParseIPSloppy rejects it: IPv4 dotted (leading zeros allowed and
 * read as decimal), IPv4-mapped IPv6 as IPv4, IPv6 in the shortest form
 * (RFC 5952); no zone index.
 */
function canonicalIp(text: string): string | undefined {
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const parts = v4.slice(1).map(Number);
    return parts.every((p) => p <= 255) ? parts.join('.') : undefined;
  }
  if (!isIPv6(text) || text.includes('%')) return undefined;
  // The WHATWG URL parser serialises IPv6 hosts in RFC 5952's shortest form, as Go does.
  const host = new URL(`http://[${text}]`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (!mapped) return host;
  const [hi, lo] = [parseInt(mapped[1], 16), parseInt(mapped[2], 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** The first value of header `name` in Node's `rawHeaders` (name, value, name, value…), as Go's Header.Get. */
function firstHeader(rawHeaders: readonly string[], name: string): string {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === name) return rawHeaders[i + 1];
  return '';
}

/**
 * The client's addresses for an audit event's `sourceIPs`, as upstream's
 * utilnet.SourceIPs computes them: the valid addresses of the first
 * X-Forwarded-For header, then X-Real-Ip unless already in that chain, then
 * the connection's remote address (which cannot be spoofed) unless it is
 * the chain's last; invalid entries are skipped. Empty when none is valid.
 * Pure.
 */
export function sourceIps(rawHeaders: readonly string[], remoteAddress: string | undefined): string[] {
  const ips: string[] = [];
  const forwardedFor = firstHeader(rawHeaders, 'x-forwarded-for');
  if (forwardedFor !== '') {
    for (const part of forwardedFor.split(',')) {
      const ip = canonicalIp(part.trim());
      if (ip) ips.push(ip);
    }
  }
  const realIp = canonicalIp(firstHeader(rawHeaders, 'x-real-ip'));
  if (realIp && !ips.includes(realIp)) ips.push(realIp);
  const remote = remoteAddress === undefined ? undefined : canonicalIp(remoteAddress);
  if (remote && ips[ips.length - 1] !== remote) ips.push(remote);
  return ips;
}
