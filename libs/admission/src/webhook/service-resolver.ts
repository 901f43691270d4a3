/**
 * Resolves `clientConfig.service` references. Plinth has no cluster DNS, so
 * an operator maps services to addresses (PLINTH_WEBHOOK_SERVICE_MAP):
 *
 *   [tenant/]namespace/name[:port]=https://host[:port][/base-path]
 *
 * entries separated by commas or whitespace. An entry with a tenant applies
 * to that tenant only; one without a port applies to every port of the
 * service. The most specific entry wins (tenant+port, tenant, port, any).
 * The service's `path` is appended to the base path. TLS is verified for
 * the in-cluster name `<name>.<namespace>.svc`, as kube-apiserver does, so
 * certificates made for the service keep working.
 */

/** Where a service reference goes. */
export interface ServiceEndpoint {
  /** The full URL without the `?timeout=` query. */
  url: URL;
  /** The TLS server name to verify. */
  servername: string;
}

interface Entry {
  tenant?: string;
  namespace: string;
  name: string;
  port?: number;
  base: URL;
}

const KEY_RE = /^(?:([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/)?([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)(?::(\d{1,5}))?$/;

function parseEntry(text: string): Entry {
  const eq = text.indexOf('=');
  if (eq < 0) throw new Error(`"${text}": expected [tenant/]namespace/name[:port]=https://host[:port][/path]`);
  const key = text.slice(0, eq);
  const m = KEY_RE.exec(key);
  if (!m) throw new Error(`"${key}": expected [tenant/]namespace/name[:port]`);
  const port = m[7] === undefined ? undefined : Number(m[7]);
  if (port !== undefined && (port < 1 || port > 65535)) throw new Error(`"${key}": port must be 1-65535`);
  let base: URL;
  try {
    base = new URL(text.slice(eq + 1));
  } catch {
    throw new Error(`"${text.slice(eq + 1)}": not a URL`);
  }
  if (base.protocol !== 'https:') throw new Error(`"${base.href}": only https:// addresses are allowed`);
  if (base.search || base.hash || base.username) throw new Error(`"${base.href}": no query, fragment or user information allowed`);
  return { tenant: m[1], namespace: m[3], name: m[5], port, base };
}

/** Joins a base path and a service path with exactly one slash between them. */
function joinPath(base: string, path: string): string {
  const b = base.endsWith('/') ? base.slice(0, -1) : base;
  return `${b}${path.startsWith('/') ? path : `/${path}`}`;
}

/** The service map; see the module comment for the format. */
export class ServiceResolver {
  private constructor(private readonly entries: Entry[]) {}

  /** Parses a map; '' gives an empty map. Throws Error naming the first bad entry. */
  static parse(spec: string | undefined): ServiceResolver {
    const parts = (spec ?? '').split(/[\s,]+/).filter((p) => p.length > 0);
    return new ServiceResolver(parts.map(parseEntry));
  }

  /** How many entries the map has. */
  get size(): number {
    return this.entries.length;
  }

  /** The endpoint of a service reference, or undefined when the map has no entry for it. */
  resolve(tenant: string, ref: { namespace: string; name: string; port?: number | null; path?: string | null }): ServiceEndpoint | undefined {
    const port = ref.port ?? 443;
    let best: Entry | undefined;
    let bestScore = -1;
    for (const e of this.entries) {
      if (e.namespace !== ref.namespace || e.name !== ref.name) continue;
      if (e.tenant !== undefined && e.tenant !== tenant) continue;
      if (e.port !== undefined && e.port !== port) continue;
      const score = (e.tenant !== undefined ? 2 : 0) + (e.port !== undefined ? 1 : 0);
      if (score > bestScore) {
        best = e;
        bestScore = score;
      }
    }
    if (!best) return undefined;
    const url = new URL(best.base.href);
    url.pathname = joinPath(best.base.pathname, ref.path ?? '/');
    return { url, servername: `${ref.name}.${ref.namespace}.svc` };
  }
}
