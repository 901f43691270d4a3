/**
 * Who makes a request, as upstream's user.Info: set by authentication, read
 * by authorization, admission and audit. Handlers see it as `ctx.user`.
 */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** The user every request without credentials becomes (when anonymous access is on), as upstream's user.Anonymous. */
export const ANONYMOUS_USER = 'system:anonymous';
/** The group of anonymous requests. */
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
/** The group every authenticated identity is given. */
export const AUTHENTICATED_GROUP = 'system:authenticated';
/** `extra` key naming the one tenant a credential is valid in (ServiceAccount tokens). */
export const TENANT_EXTRA_KEY = 'tenancy.plinth.dev/tenant';
