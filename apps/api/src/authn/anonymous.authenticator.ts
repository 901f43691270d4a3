import type { AnonymousConfig } from './authentication-configuration.js';

/** Anonymous requests everywhere (PLINTH_ANONYMOUS_AUTH's default). */
export const ANONYMOUS_EVERYWHERE: AnonymousConfig = { enabled: true, conditions: [] };
/** No anonymous requests (PLINTH_ANONYMOUS_AUTH=false). */
export const ANONYMOUS_NOWHERE: AnonymousConfig = { enabled: false, conditions: [] };

/** `/clusters/<tenant>` and the rest of a path, or undefined for a path outside any tenant prefix. */
function tenantRest(path: string): string | undefined {
  const m = /^\/clusters\/[^/]+(\/.*)?$/.exec(path);
  if (!m) return undefined;
  return m[1] ?? '/';
}

/** `path` percent-decoded; undefined when it is malformed or encodes a slash (which would move segment boundaries). */
function decoded(path: string): string | undefined {
  if (/%2f/i.test(path)) return undefined;
  try {
    return decodeURIComponent(path);
  } catch {
    return undefined;
  }
}

/**
 * Whether a request without credentials may go on as `system:anonymous`
 * (upstream's anonymous authenticator with its `conditions`): never when
 * disabled; everywhere when enabled without conditions; otherwise only
 * when the request's path, percent-decoded and without its query, equals
 * a condition's path exactly (no prefixes, no trailing-slash folding, as
 * upstream; a path with an encoded slash matches nothing). Plinth's tenants add one rule: a path under a tenant prefix,
 * `/clusters/<tenant>/rest`, also matches a condition equal to `/rest`, so
 * `/version` opens the `/version` of every tenant; a condition that names
 * `/clusters/<tenant>/…` itself opens that tenant's path only.
 */
export class AnonymousAuthenticator {
  private readonly paths: Set<string>;

  constructor(readonly config: AnonymousConfig) {
    this.paths = new Set(config.conditions.map((c) => c.path));
  }

  /** True when a request to `path` (its raw path, no query) without credentials is anonymous; false: 401. Pure. */
  allows(path: string): boolean {
    if (!this.config.enabled) return false;
    if (this.paths.size === 0) return true;
    const p = decoded(path);
    if (p === undefined) return false;
    if (this.paths.has(p)) return true;
    const rest = tenantRest(p);
    return rest !== undefined && this.paths.has(rest);
  }
}
