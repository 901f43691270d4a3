/**
 * The Content-Security-Policy of every console answer: scripts, styles,
 * images and API calls from this origin only (no inline script or style
 * element, no eval, no third-party request), no plugins, no framing, no
 * `<base>` rewriting, forms post only here. `oidcOrigins` (the configured
 * OIDC issuers, for their discovery and token endpoints during login)
 * are the only other origins `fetch` may reach.
 */
export function consoleCsp(oidcOrigins: string[] = []): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src ${["'self'", ...oidcOrigins].join(' ')}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The security headers of every console answer (`csp` from {@link consoleCsp}), besides its caching. */
export function consoleSecurityHeaders(csp: string): Record<string, string> {
  return {
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
  };
}

/** `public, max-age=31536000, immutable` for hashed assets; `no-cache` (revalidate every time) for the page. */
export function cacheControl(immutable: boolean): string {
  return immutable ? 'public, max-age=31536000, immutable' : 'no-cache';
}
