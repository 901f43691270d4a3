import { type DynamicModule, Global, Module } from '@nestjs/common';
import { WebhookEgressPolicy } from '@plinth/admission';
import { SERVING_PKI, type ServingPki } from '../pki/pki-store.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { webhookEgressPolicy } from '../config/webhook-egress-policy.js';

/**
 * The configuration read and validated once at start-up, and the PKI the
 * HTTPS listener was built with, and the webhook egress policy derived from
 * the configuration: global, so every module can inject them.
 */
@Global()
@Module({})
export class ConfigModule {
  /** Provides `config` and `pki` as {@link APP_CONFIG} and {@link SERVING_PKI}. */
  static forRoot(config: AppConfig, pki: ServingPki): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: SERVING_PKI, useValue: pki },
        { provide: WebhookEgressPolicy, useValue: webhookEgressPolicy(config) },
      ],
      exports: [APP_CONFIG, SERVING_PKI, WebhookEgressPolicy],
    };
  }
}
