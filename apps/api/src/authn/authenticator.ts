import { ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP, type UserInfo } from '@plinth/apimachinery';

/** A client certificate as the TLS layer saw it. */
export interface PeerCertificate {
  /** True when it chains to the client CA and is within its validity. */
  verified: boolean;
  /** Why verification failed, when it did. */
  verifyError?: string;
  commonName: string;
  organizations: string[];
  /** Extended key usage OIDs; undefined when the certificate has no such extension. */
  extKeyUsage?: string[];
  /** The tenant the certificate is bound to (pki/tenant-binding.ts); undefined: not bound. */
  tenant?: string;
  /** The uid of the tenant's incarnation it was issued in (with `tenant`). */
  tenantUid?: string;
  /** Set when the tenant binding is present but unreadable: the certificate must be refused. */
  bindingError?: string;
  /** The subject's user UID attributes (OID 1.3.6.1.4.1.57683.2), in order; undefined when it has none. */
  uids?: string[];
  /** Set when a UID attribute is not a string: with AllowParsingUserUIDFromCertAuth the certificate is refused. */
  uidError?: string;
}

/** The credentials of one request, as the authenticators see them. */
export interface CredentialRequest {
  /** The tenant the request addresses. */
  tenant: string;
  /** The request's path as sent, without its query (anonymous conditions match it); undefined: none (no anonymous under conditions). */
  path?: string;
  /** The bearer token of `Authorization: Bearer …`, if any. */
  bearerToken?: string;
  /** The client certificate, if the client presented one. */
  peerCertificate?: PeerCertificate;
}

/** Who a credential says the caller is. */
export interface AuthenticationResult {
  user: UserInfo;
  /** The audiences a token was checked against (TokenReview answers them). */
  audiences?: string[];
  /**
   * The tenants this identity may reach; undefined: any (authorization
   * decides). A credential used in a tenant outside this list is refused.
   */
  tenants?: string[];
}

/**
 * Thrown by an authenticator when a credential it owns is invalid (bad
 * signature, expired, revoked). The message is safe to show the client.
 */
export class AuthenticationError extends Error {}

/**
 * One way of authenticating a request. Returns null when the request carries
 * no credential of its kind (the next authenticator is asked); throws
 * {@link AuthenticationError} when it does but the credential is invalid.
 */
export interface RequestAuthenticator {
  readonly name: string;
  authenticate(req: CredentialRequest): Promise<AuthenticationResult | null> | AuthenticationResult | null;
}

/**
 * One way of checking bearer tokens (token file, ServiceAccount tokens,
 * OIDC issuers). Same contract as {@link RequestAuthenticator}, for a token.
 * `audiences`: the audiences the caller accepts (undefined: the server's own).
 */
export interface TokenAuthenticator {
  readonly name: string;
  authenticateToken(token: string, tenant: string, audiences?: string[]): Promise<AuthenticationResult | null> | AuthenticationResult | null;
}

/** Adds `system:authenticated` to a user's groups unless it is anonymous or already there (does not mutate). */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.username === ANONYMOUS_USER || user.groups.includes(AUTHENTICATED_GROUP)) return user;
  return { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}

/** The anonymous identity. */
export function anonymousUser(): UserInfo {
  return { username: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] };
}
