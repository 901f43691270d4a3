import type { AuthenticationResult, TokenAuthenticator } from './authenticator.js';
import type { JwtAuthenticator } from './jwt.authenticator.js';

/**
 * The JWT issuers of the authentication configuration as one token
 * authenticator whose list can be replaced while requests run (upstream's
 * atomic pointer to its JWT authenticator): each token is checked against
 * the list in force when its check began, so a reload takes effect for the
 * next request and never changes one under way. An issuer answers only
 * for tokens whose `iss` is its URL (URLs are unique), so the first answer
 * or error is the answer.
 */
export class JwtAuthenticatorSet implements TokenAuthenticator {
  readonly name = 'jwt';

  constructor(private current: readonly JwtAuthenticator[]) {}

  /** The issuers in force, in file order. */
  get issuers(): readonly JwtAuthenticator[] {
    return this.current;
  }

  /** Puts `next` in force for every check that starts from now on; returns the list it replaced (the caller closes it). */
  replace(next: readonly JwtAuthenticator[]): readonly JwtAuthenticator[] {
    const previous = this.current;
    this.current = next;
    return previous;
  }

  async authenticateToken(token: string, tenant: string, audiences?: string[]): Promise<AuthenticationResult | null> {
    for (const issuer of this.current) {
      const r = await issuer.authenticateToken(token, tenant, audiences);
      if (r) return r;
    }
    return null;
  }
}
