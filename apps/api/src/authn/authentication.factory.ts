import type { Logger } from 'pino';
import type { Storage } from '@plinth/storage';
import type { AppConfig } from '../config/app-config.js';
import type { ObserveChanges } from '../watch/observe-changes.js';
import { serviceAccountResource } from '../kinds/authentication/authentication.resources.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import type { LoadedAuthenticationConfig } from './authentication-config.factory.js';
import type { TokenAuthenticator } from './authenticator.js';
import { AuthenticationService } from './authentication.service.js';
import { cachedServiceAccountLookup } from './service-account-cache.js';
import type { ServiceAccountLookup } from './service-account.authenticator.js';
import type { ServiceAccountTokens } from './service-account-tokens.js';
import { TokenFileAuthenticator } from './token-file.authenticator.js';

/** Authenticators prepared before the services exist (files read, issuers configured). */
export interface PreparedAuthentication {
  serviceAccountTokens: ServiceAccountTokens;
  tokenFile?: TokenAuthenticator;
  /** The JWT issuers and anonymous settings of PLINTH_AUTHENTICATION_CONFIG and PLINTH_ANONYMOUS_AUTH. */
  authenticationConfig: LoadedAuthenticationConfig;
  /** AllowParsingUserUIDFromCertAuth is on. */
  parseCertificateUid: boolean;
}

/**
 * A ServiceAccount lookup over the object store: the uid of a live (not
 * terminating) ServiceAccount, undefined otherwise. One primary-key read.
 */
export function serviceAccountLookup(objects: Storage, registry: ResourceRegistry): ServiceAccountLookup {
  return async (tenant, namespace, name) => {
    const def = registry.lookup(tenant, '', 'v1', 'serviceaccounts');
    if (!def) return undefined;
    const found = await objects.get(ResourceStoreService.key(tenant, def, namespace, name));
    const meta = found?.body.metadata as { uid?: string; deletionTimestamp?: string } | undefined;
    if (!meta || meta.deletionTimestamp) return undefined;
    return meta.uid;
  };
}

/** Reads the static token file when configured; throws (stopping start-up) when it is unreadable or malformed. */
export function loadTokenFile(config: AppConfig): TokenAuthenticator | undefined {
  return config.tokenAuthFile ? TokenFileAuthenticator.fromFile(config.tokenAuthFile) : undefined;
}

/** Builds the authentication service of one server; `observe` follows this replica's change stream. */
export function createAuthentication(
  logger: Logger,
  prepared: PreparedAuthentication,
  objects: Storage,
  registry: ResourceRegistry,
  observe: ObserveChanges,
  tenantUid: (tenant: string) => Promise<string | undefined>,
): AuthenticationService {
  return new AuthenticationService({
    logger,
    serviceAccountTokens: prepared.serviceAccountTokens,
    // Token checks read ServiceAccounts from memory, kept current by the change stream (no storage read per request).
    serviceAccountLookup: cachedServiceAccountLookup(serviceAccountLookup(objects, registry), observe, serviceAccountResource.storageResource),
    tokenAuthenticatorsBefore: prepared.tokenFile ? [prepared.tokenFile] : [],
    tokenAuthenticatorsAfter: [prepared.authenticationConfig.jwt],
    anonymous: prepared.authenticationConfig.anonymous,
    parseCertificateUid: prepared.parseCertificateUid,
    tenantUid,
  });
}
