import { type RawBuilder, sql } from 'kysely';

/** The part of the change log one watch reads: a tenant's resource, optionally one namespace or one object. */
export interface ChangeScope {
  tenant: string;
  /** The storage resource. */
  resource: string;
  namespace?: string;
  name?: string;
}

/**
 * The index condition that selects one scope of the change log (migration
 * 0010's hashed indexes), followed by the exact comparison of the columns
 * (a hash collision costs a row read, never a wrong row). The change row is
 * `c`. A name without a namespace is filtered within the resource's range.
 * Lists at a past revision use it; watch catch-up reads through migration
 * 0012's plinth_changes_in_scope, which has the same conditions.
 */
export function changeScopeCondition(scope: ChangeScope): RawBuilder<boolean> {
  const { tenant, resource, namespace, name } = scope;
  if (namespace !== undefined && name !== undefined) {
    return sql<boolean>`plinth_hash(c.tenant, c.resource, c.namespace, c.name) = plinth_hash(${tenant}::text, ${resource}::text, ${namespace}::text, ${name}::text)
      AND c.tenant = ${tenant} AND c.resource = ${resource} AND c.namespace = ${namespace} AND c.name = ${name}`;
  }
  const byName = name !== undefined ? sql`AND c.name = ${name}` : sql``;
  if (namespace !== undefined) {
    return sql<boolean>`plinth_hash(c.tenant, c.resource, c.namespace) = plinth_hash(${tenant}::text, ${resource}::text, ${namespace}::text)
      AND c.tenant = ${tenant} AND c.resource = ${resource} AND c.namespace = ${namespace}`;
  }
  return sql<boolean>`c.tenant = ${tenant} AND plinth_hash(c.resource) = plinth_hash(${resource}::text) AND c.resource = ${resource} ${byName}`;
}
