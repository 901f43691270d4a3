import { hostname } from 'node:os';
import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { type Storage, STORAGE } from '@plinth/storage';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { SERVING_PKI, type ServingPki } from '../pki/pki-store.js';
import { LOGGER } from '../observability/logger.js';
import { Metrics } from '../observability/metrics.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { OBSERVE_CHANGES, type ObserveChanges } from '../watch/observe-changes.js';
import { createAuthentication, loadTokenFile } from '../authn/authentication.factory.js';
import { AUTHENTICATION_CONFIG, type LoadedAuthenticationConfig, loadAuthenticationConfig } from '../authn/authentication-config.factory.js';
import { AuthenticationConfigReloader } from '../authn/authentication-config-reloader.js';
import { AuthenticationService } from '../authn/authentication.service.js';
import { ServiceAccountIssuerController } from '../authn/service-account-issuer.controller.js';
import { ServiceAccountTokens } from '../authn/service-account-tokens.js';
import { TenantCache } from '../kinds/tenant/tenant-cache.js';

/** Watches PLINTH_AUTHENTICATION_CONFIG and reloads its JWT issuers when it changes; null without the file. */
function createReloader(loaded: LoadedAuthenticationConfig, config: AppConfig, logger: Logger, metrics: Metrics): AuthenticationConfigReloader | null {
  if (!loaded.file) return null;
  const reloader = new AuthenticationConfigReloader({
    path: loaded.file.path,
    initialText: loaded.file.text,
    initialAnonymous: loaded.file.anonymous,
    jwt: loaded.jwt,
    logger,
    registry: metrics.registry,
    apiServerId: `${hostname()}-${process.pid}`,
  });
  reloader.start(config.authenticationConfigReloadIntervalSeconds * 1000);
  return reloader;
}

/**
 * Authentication: client certificates, ServiceAccount tokens (issued and
 * verified with the PKI's key; ServiceAccounts read from memory kept
 * current by the change stream), the static token file, OIDC issuers
 * (AuthenticationConfiguration, reloaded when the file changes), anonymous
 * requests and impersonation; and the issuer's discovery documents.
 */
@Module({
  controllers: [ServiceAccountIssuerController],
  providers: [
    {
      provide: ServiceAccountTokens,
      useFactory: (pki: ServingPki, config: AppConfig) => ServiceAccountTokens.create(pki.serviceAccountKeyPem, config.serviceAccountIssuer),
      inject: [SERVING_PKI, APP_CONFIG],
    },
    { provide: AUTHENTICATION_CONFIG, useFactory: loadAuthenticationConfig, inject: [APP_CONFIG, LOGGER] },
    { provide: AuthenticationConfigReloader, useFactory: createReloader, inject: [AUTHENTICATION_CONFIG, APP_CONFIG, LOGGER, Metrics] },
    {
      provide: AuthenticationService,
      useFactory: (logger: Logger, loaded: LoadedAuthenticationConfig, config: AppConfig, tokens: ServiceAccountTokens, objects: Storage, registry: ResourceRegistry, observe: ObserveChanges, tenants: TenantCache) =>
        createAuthentication(
          logger,
          {
            serviceAccountTokens: tokens,
            tokenFile: loadTokenFile(config),
            authenticationConfig: loaded,
            parseCertificateUid: config.featureGates.enabled('AllowParsingUserUIDFromCertAuth'),
          },
          objects,
          registry,
          observe,
          async (t) => (await tenants.get(t))?.uid,
        ),
      inject: [LOGGER, AUTHENTICATION_CONFIG, APP_CONFIG, ServiceAccountTokens, STORAGE, ResourceRegistry, OBSERVE_CHANGES, TenantCache],
    },
  ],
  exports: [AuthenticationService],
})
export class AuthnModule implements OnApplicationShutdown {
  constructor(@Inject(AuthenticationConfigReloader) private readonly reloader: AuthenticationConfigReloader | null) {}

  onApplicationShutdown(): void {
    this.reloader?.stop();
  }
}
