/**
 * The token of an `Authorization: Bearer <token>` header, as upstream's
 * bearertoken authenticator reads it: the scheme is case-insensitive; an
 * empty token or another scheme gives undefined.
 */
export function bearerTokenOf(authorization: string | string[] | undefined): string | undefined {
  const header = Array.isArray(authorization) ? authorization[0] : authorization;
  if (!header) return undefined;
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : undefined;
}
