import { useEffect, useState } from 'preact/hooks';

/** The console's place: the part of the hash after `#`, split into path segments and query. */
export interface Route {
  parts: string[];
  query: URLSearchParams;
}

function current(): Route {
  const h = location.hash.replace(/^#\/?/, '');
  const [p, q] = h.split('?');
  return { parts: (p ?? '').split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(q ?? '') };
}

/** The current route, re-rendered on every hash change (hash routing: the server serves one page). */
export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const on = () => setRoute(current());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** The href of a route made of `parts` and `query`. */
export function href(parts: string[], query: Record<string, string | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v) q.set(k, v);
  const qs = q.toString();
  return `#/${parts.map(encodeURIComponent).join('/')}${qs ? `?${qs}` : ''}`;
}
