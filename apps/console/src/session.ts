/**
 * The console's session: the bearer token and the tenant it addresses,
 * kept in sessionStorage (gone with the tab; never in a URL or
 * localStorage, so other tabs, history and logs never see it).
 */
export interface Session {
  token: string;
  /** The tenant the console addresses now; `default` is the platform scope. */
  tenant: string;
  /** The tenant logged in to: the platform scope lets the user open tenants (with the same token) and come back. */
  home?: string;
}

const KEY = 'plinth.console.session';

/** The session of this tab, or null before login. */
export function loadSession(): Session | null {
  const raw = sessionStorage.getItem(KEY);
  if (!raw) return null;
  try {
    const s = JSON.parse(raw) as Session;
    return typeof s.token === 'string' && typeof s.tenant === 'string' ? s : null;
  } catch {
    return null;
  }
}

/** Keeps `s` for this tab. */
export function saveSession(s: Session): void {
  sessionStorage.setItem(KEY, JSON.stringify(s));
}

/** Forgets the token. */
export function clearSession(): void {
  sessionStorage.removeItem(KEY);
}

/**
 * The tenant a ServiceAccount token was issued in (its `plinth.dev/tenant`
 * claim), read without verifying (the server verifies; this only picks
 * the URL prefix); undefined for other tokens.
 */
export function tenantOfToken(token: string): string | undefined {
  const part = token.split('.')[1];
  if (!part) return undefined;
  try {
    const json = JSON.parse(atob(part.replace(/-/g, '+').replace(/_/g, '/'))) as Record<string, unknown>;
    const t = json['plinth.dev/tenant'];
    return typeof t === 'string' ? t : undefined;
  } catch {
    return undefined;
  }
}
