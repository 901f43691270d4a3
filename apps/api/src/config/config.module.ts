import { type DynamicModule, Global, Module } from '@nestjs/common';
import { WebhookEgressPolicy } from '@plinth/admission';
import type { ServingPki } from '../pki/pki-store.js';
import type { AppConfig } from './app-config.js';
import { webhookEgressPolicy } from './webhook-egress-policy.js';

/** Injection token of the validated {@link AppConfig}. */
export const APP_CONFIG = Symbol('APP_CONFIG');
/** Injection token of the {@link ServingPki} loaded (or generated) before the server was created. */
export const SERVING_PKI = Symbol('SERVING_PKI');

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
