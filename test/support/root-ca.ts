/**
 * The ConfigMap the root CA publisher keeps in every namespace
 * (apps/api/src/certificates/root-ca-publisher.ts). Tests about other
 * ConfigMaps leave it out by name or by field selector.
 */
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';

/** A field selector that leaves it out of a list or watch. */
export const NOT_ROOT_CA = `metadata.name!=${ROOT_CA_CONFIGMAP}`;

/** `items` without it. */
export function withoutRootCa<T extends { metadata?: { name?: string } }>(items: T[]): T[] {
  return items.filter((i) => i.metadata?.name !== ROOT_CA_CONFIGMAP);
}
