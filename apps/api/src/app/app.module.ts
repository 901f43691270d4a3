import { type BeforeApplicationShutdown, type DynamicModule, Inject, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { AdmissionChainModule } from './admission-chain.module.js';
import { ResourceApiModule } from './resource-api.module.js';
import { AuditModule } from './audit.module.js';
import { AuthnModule } from './authn.module.js';
import { AuthzModule } from './authz.module.js';
import type { AppConfig } from '../config/app-config.js';
import { CertificatesModule } from './certificates.module.js';
import { StorageMigrationModule } from './storage-migration.module.js';
import { CoordinationModule } from './coordination.module.js';
import { ConfigModule } from './config.module.js';
import { ConsoleModule } from './console.module.js';
import { ControllersModule } from './controllers.module.js';
import { CrdModule } from './crd.module.js';
import { DatabaseModule } from './database.module.js';
import { DiscoveryModule } from './discovery.module.js';
import { EncryptionModule } from './encryption.module.js';
import { EncryptionRotationModule } from './encryption-rotation.module.js';
import { EventTtlModule } from './event-ttl.module.js';
import { FlowControlModule } from './flowcontrol.module.js';
import { GarbageCollectionModule } from './gc.module.js';
import { HealthModule } from './health.module.js';
import { RequestPipelineModule } from './request-pipeline.module.js';
import { JobsModule } from './jobs.module.js';
import { KindsModule } from './kinds.module.js';
import { LifecycleModule } from './lifecycle.module.js';
import { ShutdownSequence } from '../lifecycle/shutdown-sequence.js';
import { NamespaceModule } from './namespace.module.js';
import { ObservabilityModule } from './observability.module.js';
import { TracingModule } from './tracing.module.js';
import type { ServingPki } from '../pki/pki-store.js';
import { QuotaModule } from './quota.module.js';
import { RbacModule } from './rbac.module.js';
import { ShardingModule } from './sharding.module.js';
import { ShardsModule } from './shards.module.js';
import { StorageModule } from './storage.module.js';
import { ResourceStoreModule } from './resource-store.module.js';
import { TenancyModule } from './tenancy.module.js';
import { WatchModule } from './watch.module.js';

/**
 * The root module: one module per concern (see docs/architecture.md for
 * the graph). Global ones first, in the order they start: configuration,
 * logs and metrics, the database (connected and migrated), storage, the
 * change stream, the server's own lifecycle, the kinds every tenant is served. At close, the drain runs here
 * first (this module is the nearest to the root), then every module stops
 * its own work, the database last.
 */
@Module({})
export class AppModule implements BeforeApplicationShutdown {
  constructor(@Inject(ShutdownSequence) private readonly shutdown: ShutdownSequence) {}

  /** The application for `config`, serving with `pki`, logging to `logger`. */
  static forRoot(config: AppConfig, pki: ServingPki, logger: Logger): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config, pki),
        ObservabilityModule.forRoot(logger),
        EncryptionModule,
        DatabaseModule,
        ShardsModule,
        TracingModule,
        StorageModule,
        JobsModule.forRoot(config),
        WatchModule,
        LifecycleModule,
        ControllersModule,
        KindsModule,
        AuthnModule,
        AuthzModule,
        AdmissionChainModule,
        ResourceStoreModule,
        RbacModule,
        CrdModule,
        TenancyModule,
        ShardingModule,
        EncryptionRotationModule,
        QuotaModule,
        GarbageCollectionModule,
        NamespaceModule,
        EventTtlModule,
        CertificatesModule,
        StorageMigrationModule,
        CoordinationModule,
        FlowControlModule,
        AuditModule,
        DiscoveryModule,
        ConsoleModule,
        RequestPipelineModule.forRoot(config.tracingConfigFile !== undefined),
        HealthModule,
        ResourceApiModule,
      ],
    };
  }

  async beforeApplicationShutdown(signal?: string): Promise<void> {
    await this.shutdown.run(signal);
  }
}
