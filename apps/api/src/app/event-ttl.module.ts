import { Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { EventExpiryRepository, type Storage, STORAGE } from '@plinth/storage';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ControllerManager } from '../controllers/controller-manager.js';
import { LOGGER } from '../observability/logger.js';
import { ShardPool } from '../sharding/shard-pool.js';
import { EventTtlController } from '../events/event-ttl.controller.js';

/** PLINTH_EVENT_TTL: the controller that removes Events not written for that long (one replica runs it). */
@Module({
  providers: [
    { provide: EventExpiryRepository, useFactory: (shards: ShardPool) => new EventExpiryRepository(shards), inject: [ShardPool] },
    {
      provide: EventTtlController,
      useFactory: (expiry: EventExpiryRepository, objects: Storage, logger: Logger, config: AppConfig, manager: ControllerManager) => {
        const controller = new EventTtlController({ expiry, objects, logger, ttlMs: config.eventTtlMs });
        manager.register(controller);
        return controller;
      },
      inject: [EventExpiryRepository, STORAGE, LOGGER, APP_CONFIG, ControllerManager],
    },
  ],
  exports: [EventTtlController],
})
export class EventTtlModule {}
