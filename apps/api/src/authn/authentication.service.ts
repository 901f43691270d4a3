import type { Logger } from 'pino';
import { AnonymousAuthenticator } from './anonymous.authenticator.js';
import type { AnonymousConfig } from './authentication-configuration.js';
import { AuthenticationChain, type AuthenticationOutcome, BearerTokenAuthenticator, reachesTenant } from './authentication-chain.js';
import { AuthenticationError, type AuthenticationResult, type CredentialRequest, type TokenAuthenticator, withAuthenticatedGroup } from './authenticator.js';
import { ServiceAccountAuthenticator, type ServiceAccountLookup } from './service-account.authenticator.js';
import type { ServiceAccountTokens } from './service-account-tokens.js';
import { X509Authenticator } from './x509.authenticator.js';

/** What the authentication service is built from. */
export interface AuthenticationDeps {
  logger: Logger;
  serviceAccountTokens: ServiceAccountTokens;
  serviceAccountLookup: ServiceAccountLookup;
  /** Token authenticators consulted before ServiceAccount tokens (the static token file). */
  tokenAuthenticatorsBefore?: TokenAuthenticator[];
  /** Token authenticators consulted after ServiceAccount tokens (OIDC/JWT issuers). */
  tokenAuthenticatorsAfter?: TokenAuthenticator[];
  /** Anonymous requests: enabled or not, and on which paths. */
  anonymous: AnonymousConfig;
  /** AllowParsingUserUIDFromCertAuth: a client certificate's subject UID attribute is the user's uid. */
  parseCertificateUid?: boolean;
  /** The uid of a tenant as it exists now (undefined when it does not), which a tenant-bound certificate must name. */
  tenantUid: (tenant: string) => Promise<string | undefined>;
}

/**
 * Authentication for the request path and for TokenReview: client
 * certificates, then bearer tokens (token file, ServiceAccount tokens, JWT
 * issuers), then anonymous. Authorization is separate (the request path's
 * authorizer is passed to request-authentication.hook.ts).
 */
export class AuthenticationService {
  readonly chain: AuthenticationChain;
  readonly bearer: BearerTokenAuthenticator;

  constructor(readonly deps: AuthenticationDeps) {
    this.bearer = new BearerTokenAuthenticator([
      ...(deps.tokenAuthenticatorsBefore ?? []),
      new ServiceAccountAuthenticator(deps.serviceAccountTokens, deps.serviceAccountLookup, deps.tenantUid),
      ...(deps.tokenAuthenticatorsAfter ?? []),
    ]);
    this.chain = new AuthenticationChain([new X509Authenticator(deps.tenantUid, deps.parseCertificateUid ?? true), this.bearer], new AnonymousAuthenticator(deps.anonymous));
  }

  /** The ServiceAccount token signer/verifier. */
  get serviceAccountTokens(): ServiceAccountTokens {
    return this.deps.serviceAccountTokens;
  }

  /** Authenticates one request's credentials. */
  authenticate(req: CredentialRequest): Promise<AuthenticationOutcome> {
    return this.chain.authenticate(req);
  }

  /**
   * TokenReview: checks `token` as a bearer token in `tenant` against
   * `audiences` (the server's when empty). `result` when it authenticates,
   * else `error` saying why.
   */
  async reviewToken(token: string, tenant: string, audiences: string[]): Promise<{ result?: AuthenticationResult; error?: string }> {
    try {
      const r = await this.bearer.authenticateToken(token, tenant, audiences.length > 0 ? audiences : undefined);
      if (!r || !reachesTenant(r, tenant)) return { error: 'invalid bearer token' };
      const user = withAuthenticatedGroup(r.user);
      return { result: { ...r, user, audiences: r.audiences ?? (audiences.length > 0 ? audiences : this.serviceAccountTokens.apiAudiences) } };
    } catch (err) {
      if (err instanceof AuthenticationError) return { error: err.message };
      throw err;
    }
  }
}
