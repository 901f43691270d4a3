/** The one-segment discovery paths (`/version`, `/api`, `/apis`). */
const ROOTS = new Set(['version', 'api', 'apis']);

/** Whether `parts` (a path's segments after any `/clusters/{tenant}`) name a discovery document. */
function isDiscovery(parts: string[]): boolean {
  if (parts.some((p) => p.length === 0)) return false;
  if (parts.length === 1) return ROOTS.has(parts[0]);
  if (parts.length === 2) return parts[0] === 'api' || parts[0] === 'apis';
  return parts.length === 3 && parts[0] === 'apis';
}

/**
 * The request URL a discovery path with a trailing slash is served under:
 * `/api/`, `/apis/`, `/api/{v}/`, `/apis/{g}/`, `/apis/{g}/{v}/` and
 * `/version/` (each also under `/clusters/{tenant}`) lose the slash, query
 * kept; any other URL is returned unchanged. kube-apiserver serves these
 * documents with the slash too (its go-restful routes and CRD discovery
 * handlers match a path by its non-empty segments, and `/apis/` is
 * registered beside `/apis`), while Nest routes drop a trailing slash from
 * their paths and so cannot declare both. Pure; used as Fastify's
 * `rewriteUrl`, before routing.
 */
export function withoutDiscoverySlash(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (path.length < 2 || !path.endsWith('/') || !path.startsWith('/')) return url;
  let parts = path.slice(1, -1).split('/');
  if (parts[0] === 'clusters' && parts.length > 2) parts = parts.slice(2);
  return isDiscovery(parts) ? path.slice(0, -1) + (q < 0 ? '' : url.slice(q)) : url;
}
