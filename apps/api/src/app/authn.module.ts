import { Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { type Storage, STORAGE } from '@plinth/storage';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { SERVING_PKI, type ServingPki } from '../pki/pki-store.js';
import { LOGGER } from '../observability/logger.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { OBSERVE_CHANGES, type ObserveChanges } from '../watch/observe-changes.js';
import { createAuthentication, loadTokenFile } from '../authn/authentication.factory.js';
import { AuthenticationService } from '../authn/authentication.service.js';
import { loadJwtAuthenticators } from '../authn/jwt-issuers.factory.js';
import { ServiceAccountIssuerController } from '../authn/service-account-issuer.controller.js';
import { ServiceAccountTokens } from '../authn/service-account-tokens.js';
import { TenantCache } from '../kinds/tenant/tenant-cache.js';

/**
 * Authentication: client certificates, ServiceAccount tokens (issued and
 * verified with the PKI's key; ServiceAccounts read from memory kept
 * current by the change stream), the static token file, OIDC issuers
 * (AuthenticationConfiguration), anonymous requests and impersonation;
 * and the issuer's discovery documents.
 */
@Module({
  controllers: [ServiceAccountIssuerController],
  providers: [
    {
      provide: ServiceAccountTokens,
      useFactory: (pki: ServingPki, config: AppConfig) => ServiceAccountTokens.create(pki.serviceAccountKeyPem, config.serviceAccountIssuer),
      inject: [SERVING_PKI, APP_CONFIG],
    },
    {
      provide: AuthenticationService,
      useFactory: async (config: AppConfig, logger: Logger, tokens: ServiceAccountTokens, objects: Storage, registry: ResourceRegistry, observe: ObserveChanges, tenants: TenantCache) =>
        createAuthentication(
          config,
          logger,
          { serviceAccountTokens: tokens, tokenFile: loadTokenFile(config), jwtIssuers: await loadJwtAuthenticators(config, logger) },
          objects,
          registry,
          observe,
          async (t) => (await tenants.get(t))?.uid,
        ),
      inject: [APP_CONFIG, LOGGER, ServiceAccountTokens, STORAGE, ResourceRegistry, OBSERVE_CHANGES, TenantCache],
    },
  ],
  exports: [AuthenticationService],
})
export class AuthnModule {}
