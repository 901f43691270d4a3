import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { type ServedResource, servedResource } from '../discovery.js';
import { Problem } from './problem.js';

interface Props {
  api: Api;
  gv: string;
  resource: string;
  /** Rendered only for a resource discovery returned. */
  children: (info: ServedResource) => ComponentChildren;
}

/**
 * Renders `children` only once discovery has returned `gv`/`resource`:
 * the group, version and resource of a route come from the URL hash, which
 * a crafted link chooses, so no API call is made with them until they are
 * known names of the tenant. Anything else shows a problem and calls
 * nothing.
 */
export function ServedGate({ api, gv, resource, children }: Props) {
  const [info, setInfo] = useState<ServedResource | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setInfo(undefined);
    servedResource(api, gv, resource).then((r) => setInfo(r ?? null), setError);
  }, [gv, resource]);
  if (error) return <Problem error={error} />;
  if (info === undefined) return <p>Loading…</p>;
  if (info === null) return <Problem error={new Error(`This tenant serves no resource "${resource}" in ${gv}.`)} />;
  return <>{children(info)}</>;
}
