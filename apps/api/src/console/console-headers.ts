/**
 * The Content-Security-Policy of every console answer: scripts, styles,
 * images and API calls from this origin only (no inline script or style
 * element, no eval, no third-party request), no plugins, no framing, no
 * `<base>` rewriting, forms post only here.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The security headers of every console answer, besides its caching. */
export const CONSOLE_SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

/** `public, max-age=31536000, immutable` for hashed assets; `no-cache` (revalidate every time) for the page. */
export function cacheControl(immutable: boolean): string {
  return immutable ? 'public, max-age=31536000, immutable' : 'no-cache';
}
