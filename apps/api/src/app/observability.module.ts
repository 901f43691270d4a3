import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from '../observability/metrics.js';
import { LOGGER } from '../observability/logger.js';

/**
 * Structured logs (pino) and Prometheus metrics (one registry per server
 * instance, with the feature gates' `kubernetes_feature_enabled`): global.
 */
@Global()
@Module({})
export class ObservabilityModule {
  /** Provides `logger` as {@link LOGGER} and the {@link Metrics} of this instance. */
  static forRoot(logger: Logger): DynamicModule {
    return {
      module: ObservabilityModule,
      providers: [
        { provide: LOGGER, useValue: logger },
        {
          provide: Metrics,
          useFactory: (config: AppConfig) => {
            const metrics = new Metrics();
            config.featureGates.register(metrics.registry);
            return metrics;
          },
          inject: [APP_CONFIG],
        },
      ],
      exports: [LOGGER, Metrics],
    };
  }
}
