import { isIP } from 'node:net';
import { rejected } from './config-error.js';

/** Whether `host` (a HOST value, an IP or a name, IPv6 with or without brackets) is an unspecified address (0.0.0.0, ::): listening on every address, naming none. */
export function isUnspecifiedHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (isIP(bare) === 4) return bare.split('.').every((o) => Number(o) === 0);
  if (isIP(bare) === 6) return /^[0:]+$/.test(bare);
  return false;
}

/**
 * PLINTH_ADVERTISE_URL validated and normalized (`https://host[:port]`, no
 * trailing slash): an absolute `https:` URL with a host that is not an
 * unspecified address, and no user, password, path, query or fragment
 * (tenants' URLs are `<it>/clusters/<name>`). Undefined when unset. Throws
 * ConfigError naming the variable.
 */
export function readAdvertiseUrl(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  try {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new Error(`${JSON.stringify(value)} is not an absolute URL`);
    }
    if (url.protocol !== 'https:') throw new Error(`${JSON.stringify(value)}: the scheme must be https`);
    if (url.username || url.password) throw new Error(`${JSON.stringify(value)}: must not carry a user or password`);
    if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) throw new Error(`${JSON.stringify(value)}: must have no path, query or fragment (Plinth serves at the root)`);
    if (url.hostname === '' || isUnspecifiedHost(url.hostname)) throw new Error(`${JSON.stringify(value)}: the host must be an address clients can reach, not ${url.hostname || 'empty'}`);
    return `https://${url.host}`;
  } catch (err) {
    throw rejected('PLINTH_ADVERTISE_URL', err);
  }
}

/** IPv4 127/8 and IPv6 ::1: only this host reaches them. */
function isLoopback(ip: string): boolean {
  return ip.startsWith('127.') || ip === '::1';
}

/**
 * The URL clients are told to use (each Tenant's `status.url` starts with
 * it): `advertiseUrl` when set; else the listening address when it names
 * one; else, when Plinth listens on every address (0.0.0.0, ::), a name
 * of the serving certificate (`sans`, in their order): its first DNS name
 * other than `localhost`, else its first IP address that is neither
 * loopback nor unspecified, else `localhost`, with the listening `port`.
 * Never 0.0.0.0 or ::. Pure.
 */
export function advertisedUrl(advertiseUrl: string | undefined, host: string, port: number, sans: { dns: string[]; ip: string[] }): string {
  if (advertiseUrl) return advertiseUrl;
  const name = isUnspecifiedHost(host)
    ? (sans.dns.find((n) => n !== 'localhost' && !n.startsWith('*')) ?? sans.ip.find((ip) => !isLoopback(ip) && !isUnspecifiedHost(ip)) ?? 'localhost')
    : host.replace(/^\[(.*)\]$/, '$1');
  return `https://${name.includes(':') ? `[${name}]` : name}:${port}`;
}
