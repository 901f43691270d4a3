import type { ChangeSource } from '@plinth/storage';
import type { KubeObject } from '@plinth/apimachinery';
import { PLATFORM_TENANT, TENANT_STORAGE_RESOURCE } from '../kinds/tenant/tenant-api.js';
import type { TenantDirectory } from './tenant-directory.js';

/** What keeps a replica's tenant directory current. */
export interface DirectoryFeedDeps {
  directory: TenantDirectory;
  /** The change stream of every shard (Tenant objects live on the default one). */
  changes: ChangeSource;
  /** Every Tenant object now (a list of the platform scope). */
  listTenants: () => Promise<KubeObject[]>;
  /** Told of a load that failed (the next reset or change retries). */
  onError: (err: unknown) => void;
}

/**
 * Loads every Tenant object into the directory, then follows their changes
 * on the change stream; after a reset of the stream (a hole it could not
 * fill), loads them again. Returns the function that stops following.
 */
export async function followTenantObjects(deps: DirectoryFeedDeps): Promise<() => void> {
  // A reload after a hole also finds the tenants deleted meanwhile (their retirement is told then).
  const load = async () => deps.directory.replaceAll(await deps.listTenants());
  const stop = deps.changes.observe(TENANT_STORAGE_RESOURCE, {
    onChange: (c) => {
      if (c.key.tenant === PLATFORM_TENANT) deps.directory.apply(c.type, c.object as KubeObject);
    },
    onReset: () => void load().catch(deps.onError),
  });
  await load();
  return stop;
}
