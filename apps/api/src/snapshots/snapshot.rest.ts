import type { KindRest } from '../handlers/kind-rest.js';
import { parseBool } from '../http/options/query-validation.js';
import { TENANT_STORAGE_RESOURCE } from '../kinds/tenant/tenant-api.js';
import type { SnapshotCatalog } from './snapshot-catalog.js';
import type { TenantSnapshotService } from './tenant-snapshot.service.js';

/**
 * The `snapshot` subresource of Tenant (platform scope): GET streams the
 * tenant's snapshot (`resourceVersion` or `at`: the point; `recipient`,
 * repeatable: age X25519 public keys the Secrets are sealed to); POST
 * restores the snapshot in the body into the tenant (`replace=true` to
 * replace what it holds). RBAC: `get` / `create` on `tenants/snapshot` in
 * group tenancy.plinth.dev. The `restore` subresource (POST, `create` on
 * `tenants/restore`) brings named namespaces and objects of the live tenant
 * back from the change history. The `snapshots` subresource (GET, `get` on
 * `tenants/snapshots`) lists the tenant's snapshots in the snapshot target.
 */
export function tenantSnapshotRest(snapshots: TenantSnapshotService, catalog: SnapshotCatalog): KindRest {
  return {
    serves: (def) => def.storageResource === TENANT_STORAGE_RESOURCE,
    subresources: {
      snapshot: {
        get: (ctx) => snapshots.export(ctx.req, ctx.reply, ctx.info.name, { resourceVersion: ctx.query.resourceVersion, at: ctx.query.at, recipients: ctx.queryAll.recipient ?? [] }),
        create: (ctx) => snapshots.restore(ctx.req, ctx.reply, ctx.info.name, ctx.body, parseBool(ctx.query.replace) === true),
      },
      restore: {
        create: (ctx) => snapshots.restoreHistory(ctx.req, ctx.reply, ctx.info.name, ctx.body),
      },
      snapshots: {
        get: (ctx) => catalog.list(ctx.req, ctx.reply, ctx.info.name),
      },
    },
  };
}
