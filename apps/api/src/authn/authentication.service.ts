import type { Logger } from 'pino';
import type { UserInfo } from '../../../../libs/admission/src/index.js';
import type { Authorizer } from '../authz/authorizer.js';
import { AuthenticationChain, type AuthenticationOutcome, BearerTokenAuthenticator } from './authentication-chain.js';
import type { AuthenticationResult, CredentialRequest, TokenAuthenticator } from './authenticator.js';
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
  anonymousEnabled: boolean;
}

/**
 * Authentication for the request path and for TokenReview: client
 * certificates, then bearer tokens (token file, ServiceAccount tokens, JWT
 * issuers), then anonymous. `authorizer` is the request path's authorizer
 * once authorization is wired (see request-authentication.hook.ts).
 */
export class AuthenticationService {
  readonly chain: AuthenticationChain;
  readonly bearer: BearerTokenAuthenticator;
  /** The authorizer for impersonation and request authorization; undefined until one is installed. */
  authorizer: Authorizer | undefined;

  constructor(readonly deps: AuthenticationDeps) {
    this.bearer = new BearerTokenAuthenticator([
      ...(deps.tokenAuthenticatorsBefore ?? []),
      new ServiceAccountAuthenticator(deps.serviceAccountTokens, deps.serviceAccountLookup),
      ...(deps.tokenAuthenticatorsAfter ?? []),
    ]);
    this.chain = new AuthenticationChain([new X509Authenticator(), this.bearer], deps.anonymousEnabled);
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
   * `audiences` (the server's when empty). Null when it does not authenticate.
   */
  async reviewToken(token: string, tenant: string, audiences: string[]): Promise<AuthenticationResult | null> {
    try {
      const r = await this.bearer.authenticateToken(token, tenant, audiences.length > 0 ? audiences : undefined);
      if (!r) return null;
      const user: UserInfo = r.user.groups.includes('system:authenticated') ? r.user : { ...r.user, groups: [...r.user.groups, 'system:authenticated'] };
      return { ...r, user, audiences: r.audiences ?? (audiences.length > 0 ? audiences : this.serviceAccountTokens.apiAudiences) };
    } catch (err) {
      this.deps.logger.debug({ err: (err as Error).message }, 'token review: token rejected');
      return null;
    }
  }
}
