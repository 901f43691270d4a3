import { Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { ObjectListRepository } from '@plinth/storage';
import type { KubeObject } from '@plinth/apimachinery';
import { PLATFORM_TENANT, TENANT_STORAGE_RESOURCE } from '../kinds/tenant/tenant-api.js';
import { LOGGER } from '../observability/observability.module.js';
import { WatchService } from '../watch/watch.service.js';
import { followTenantObjects } from './directory-feed.js';
import { TenantDirectory } from './tenant-directory.js';

/**
 * Shards as the platform runs them: the directory fed by the Tenant
 * objects' change stream on every replica, and the watches of a tenant
 * that moved ended on the shard it left.
 */
@Module({})
export class ShardingModule implements OnModuleInit, OnApplicationShutdown {
  private stops: Array<() => void> = [];

  constructor(
    @Inject(TenantDirectory) private readonly directory: TenantDirectory,
    @Inject(WatchService) private readonly watch: WatchService,
    @Inject(ObjectListRepository) private readonly lists: ObjectListRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onModuleInit(): Promise<void> {
    this.stops.push(this.directory.onMove((tenant, from, to) => this.watch.endMovedTenant(tenant, `tenant ${tenant} moved from shard ${from} to ${to}`)));
    this.stops.push(
      await followTenantObjects({
        directory: this.directory,
        changes: this.watch.cache,
        listTenants: async () => (await this.lists.list({ tenant: PLATFORM_TENANT, resource: TENANT_STORAGE_RESOURCE })).items.map((i) => i.body as KubeObject),
        onError: (err) => this.logger.warn({ err: (err as Error).message }, 'tenant directory: reload failed'),
      }),
    );
  }

  onApplicationShutdown(): void {
    for (const stop of this.stops) stop();
    this.stops = [];
  }
}
