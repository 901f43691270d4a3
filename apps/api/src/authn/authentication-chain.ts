import { TENANT_EXTRA_KEY } from '@plinth/apimachinery';
import {
  anonymousUser,
  AuthenticationError,
  type AuthenticationResult,
  type CredentialRequest,
  type RequestAuthenticator,
  type TokenAuthenticator,
  withAuthenticatedGroup,
} from './authenticator.js';
import type { AnonymousAuthenticator } from './anonymous.authenticator.js';

/** The outcome of authenticating one request. */
export type AuthenticationOutcome =
  | { ok: true; result: AuthenticationResult; anonymous: boolean }
  | { ok: false; reasons: string[] };

/**
 * Bearer tokens tried through each token authenticator in order, as
 * upstream's token union: the first that accepts wins; errors are collected.
 */
export class BearerTokenAuthenticator implements RequestAuthenticator {
  readonly name = 'bearer';

  constructor(private readonly tokens: TokenAuthenticator[]) {}

  /** Checks `token` against every token authenticator; null when none claims it. Throws when some rejected it and none accepted. */
  async authenticateToken(token: string, tenant: string, audiences?: string[]): Promise<AuthenticationResult | null> {
    const errors: string[] = [];
    for (const a of this.tokens) {
      try {
        const r = await a.authenticateToken(token, tenant, audiences);
        if (r) return r;
      } catch (err) {
        if (!(err instanceof AuthenticationError)) throw err;
        errors.push(err.message);
      }
    }
    if (errors.length > 0) throw new AuthenticationError(errors.join(', '));
    return null;
  }

  async authenticate(req: CredentialRequest): Promise<AuthenticationResult | null> {
    if (req.bearerToken === undefined) return null;
    const r = await this.authenticateToken(req.bearerToken, req.tenant);
    // A token no authenticator knows is invalid, not absent: upstream answers 401, never anonymous.
    if (!r) throw new AuthenticationError('invalid bearer token');
    return r;
  }
}

/** True when `result` may be used in `tenant`. */
export function reachesTenant(result: AuthenticationResult, tenant: string): boolean {
  if (result.tenants && !result.tenants.includes(tenant)) return false;
  const bound = result.user.extra?.[TENANT_EXTRA_KEY];
  return !bound || bound.includes(tenant);
}

/**
 * Upstream's authentication order: each authenticator in turn (client
 * certificate, then bearer tokens), the first that answers wins; when none
 * does and none failed, anonymous (if `anonymous` allows the request's
 * path); otherwise a failure with the reasons (for logs, never for the
 * client). Every authenticated user gets `system:authenticated`. A
 * credential valid only in other tenants fails.
 */
export class AuthenticationChain {
  constructor(
    private readonly authenticators: RequestAuthenticator[],
    private readonly anonymous: AnonymousAuthenticator,
  ) {}

  /** Authenticates one request; never throws an AuthenticationError (returns `ok: false`). */
  async authenticate(req: CredentialRequest): Promise<AuthenticationOutcome> {
    const reasons: string[] = [];
    for (const a of this.authenticators) {
      try {
        const r = await a.authenticate(req);
        if (!r) continue;
        if (!reachesTenant(r, req.tenant)) {
          reasons.push(`${a.name}: credential not valid in this tenant`);
          continue;
        }
        return { ok: true, result: { ...r, user: withAuthenticatedGroup(r.user) }, anonymous: false };
      } catch (err) {
        if (!(err instanceof AuthenticationError)) throw err;
        reasons.push(`${a.name}: ${err.message}`);
      }
    }
    if (reasons.length > 0) return { ok: false, reasons };
    if (!this.anonymous.allows(req.path ?? '')) return { ok: false, reasons: [this.anonymous.config.enabled ? 'anonymous: not allowed on this path' : 'anonymous: disabled'] };
    return { ok: true, result: { user: anonymousUser() }, anonymous: true };
  }
}
