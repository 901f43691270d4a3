import type { AuthenticationResult, TokenAuthenticator } from './authenticator.js';
import { TENANT_EXTRA_KEY } from '@plinth/apimachinery';
import { AuthenticationError } from './authenticator.js';
import type { ServiceAccountTokens } from './service-account-tokens.js';

/** Finds a ServiceAccount's uid; undefined when it does not exist (or is being deleted). */
export type ServiceAccountLookup = (tenant: string, namespace: string, name: string) => Promise<string | undefined>;

/**
 * Bound ServiceAccount tokens: a verified token is accepted only while its
 * ServiceAccount exists with the uid the token names, so deleting (or
 * re-creating) the ServiceAccount revokes every token issued for it, and
 * while its tenant is the one it was issued in (the tenant's uid), so
 * deleting the tenant revokes every token issued in it for good.
 * The user is upstream's: `system:serviceaccount:<ns>:<name>`, groups
 * `system:serviceaccounts` and `system:serviceaccounts:<ns>`, the
 * credential id in `extra`, plus the tenant it is bound to.
 */
export class ServiceAccountAuthenticator implements TokenAuthenticator {
  readonly name = 'serviceaccount';

  /** `tenantUid`: the uid of a tenant as it exists now (undefined when it does not): a token naming a tenant uid must name it. */
  constructor(
    private readonly tokens: ServiceAccountTokens,
    private readonly lookup: ServiceAccountLookup,
    private readonly tenantUid: (tenant: string) => Promise<string | undefined>,
  ) {}

  async authenticateToken(token: string, tenant: string, audiences?: string[]): Promise<AuthenticationResult | null> {
    const claims = await this.tokens.verify(token, tenant, audiences);
    if (!claims) return null;
    if (claims.tenantUid !== undefined && claims.tenantUid !== (await this.tenantUid(tenant))) {
      throw new AuthenticationError(`service account token was issued in a tenant that has since been deleted`);
    }
    const uid = await this.lookup(tenant, claims.namespace, claims.name);
    if (uid === undefined) throw new AuthenticationError(`service account ${claims.namespace}/${claims.name} has been deleted`);
    if (uid !== claims.uid) throw new AuthenticationError(`service account UID (${claims.uid}) does not match the current one (${uid})`);
    return {
      user: {
        username: `system:serviceaccount:${claims.namespace}:${claims.name}`,
        uid,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${claims.namespace}`],
        extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${claims.jti}`], [TENANT_EXTRA_KEY]: [claims.tenant] },
      },
      audiences: claims.audiences,
      tenants: [claims.tenant],
    };
  }
}
