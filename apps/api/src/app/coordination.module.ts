import { Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { ObjectListRepository, ObjectStoreRepository, TenantRepository } from '@plinth/storage';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ControllerManager } from '../controllers/controller-manager.js';
import { LOGGER } from '../observability/logger.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { ResourceDeleteService } from '../resource-store/resource-delete.service.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { ResourceStoreModule } from './resource-store.module.js';
import { OBSERVE_CHANGES, type ObserveChanges } from '../watch/observe-changes.js';
import { CoordinatedLeaderElectionController } from '../coordination/coordinated-leader-election.controller.js';
import { LEASE_CANDIDATE_GROUP, LEASE_CANDIDATE_VERSION } from '../kinds/coordination/lease-candidate.schema.js';

/** Token of the controller, null when the CoordinatedLeaderElection gate is off or LeaseCandidate is not served. */
export const COORDINATED_ELECTION_CONTROLLER = Symbol('COORDINATED_ELECTION_CONTROLLER');

/**
 * Coordinated leader election in the ControllerManager, as kube-apiserver
 * runs it: only with the CoordinatedLeaderElection gate on and
 * coordination.k8s.io/v1beta1 (LeaseCandidate) served.
 */
@Module({
  imports: [ResourceStoreModule],
  providers: [
    {
      provide: COORDINATED_ELECTION_CONTROLLER,
      useFactory: (
        config: AppConfig,
        registry: ResourceRegistry,
        store: ResourceStoreService,
        deleter: ResourceDeleteService,
        objects: ObjectStoreRepository,
        lists: ObjectListRepository,
        tenants: TenantRepository,
        observe: ObserveChanges,
        logger: Logger,
        manager: ControllerManager,
      ) => {
        if (!config.featureGates.enabled('CoordinatedLeaderElection') || !config.runtimeConfig.serves(`${LEASE_CANDIDATE_GROUP}/${LEASE_CANDIDATE_VERSION}`)) return null;
        const controller = new CoordinatedLeaderElectionController({ registry, store, deleter, objects, lists, tenants: () => tenants.list(), observe, logger, queues: manager });
        manager.register(controller);
        return controller;
      },
      inject: [APP_CONFIG, ResourceRegistry, ResourceStoreService, ResourceDeleteService, ObjectStoreRepository, ObjectListRepository, TenantRepository, OBSERVE_CHANGES, LOGGER, ControllerManager],
    },
  ],
})
export class CoordinationModule {}
