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
