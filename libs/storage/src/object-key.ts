/** Identifies one stored object. `namespace` is '' for cluster-scoped objects. */
export interface ObjectKey {
  tenant: string;
  /** Group-qualified resource, e.g. `configmaps` or `widgets.example.com`. */
  resource: string;
  namespace: string;
  name: string;
}

/** An object as read from storage; `body.metadata.resourceVersion` is set to `revision`. */
export interface StoredObject {
  key: ObjectKey;
  revision: number;
  body: Record<string, unknown>;
}

/**
 * Returns a shallow copy of `body` whose metadata carries `resourceVersion`.
 * Bodies are stored without it, since the revision is only known inside the
 * write. Does not mutate `body`.
 */
export function withResourceVersion(body: Record<string, unknown>, revision: number): Record<string, unknown> {
  const metadata = { ...((body.metadata as Record<string, unknown>) ?? {}), resourceVersion: String(revision) };
  return { ...body, metadata };
}

/** Returns a copy of `body` without metadata.resourceVersion, the form that is stored. */
export function withoutResourceVersion(body: Record<string, unknown>): Record<string, unknown> {
  const meta = body.metadata as Record<string, unknown> | undefined;
  if (!meta || !('resourceVersion' in meta)) return body;
  const { resourceVersion: _drop, ...rest } = meta;
  return { ...body, metadata: rest };
}
