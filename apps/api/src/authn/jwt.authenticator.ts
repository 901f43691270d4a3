import { CelBudget, celToJson, jsonToCel } from '@plinth/cel';
import type { UserInfo } from '@plinth/apimachinery';
import { createRemoteJWKSet, customFetch, type JWTPayload, jwtVerify } from 'jose';
import { Agent, fetch as undiciFetch } from 'undici';
import { AuthenticationError, type AuthenticationResult, type TokenAuthenticator } from './authenticator.js';
import type { ClaimOrExpression, JwtIssuerConfig } from './authentication-configuration.js';
import { unverifiedPayload } from './service-account-tokens.js';

/** Signing algorithms accepted from external issuers (upstream's list minus none/HMAC). */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'];
/** The shortest interval between two JWKS fetches triggered by unknown key ids. */
const JWKS_COOLDOWN_MS = 5000;
/** Discovery is retried at most this often after a failure. */
const DISCOVERY_RETRY_MS = 5000;

function fail(message: string): never {
  throw new AuthenticationError(`jwt: ${message}`);
}

function evalString(expr: ClaimOrExpression, claims: JWTPayload, activation: Record<string, unknown>, what: string): string | undefined {
  if (expr.expression) {
    const v = celToJson(expr.expression.evaluate(activation, new CelBudget()));
    if (typeof v !== 'string') fail(`${what} expression must return a string`);
    return v;
  }
  const v = claims[expr.claim!];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') fail(`claim ${expr.claim} is not a string`);
  return (expr.prefix ?? '') + v;
}

function evalStrings(expr: ClaimOrExpression, claims: JWTPayload, activation: Record<string, unknown>, what: string): string[] {
  const v = expr.expression ? celToJson(expr.expression.evaluate(activation, new CelBudget())) : claims[expr.claim!];
  if (v === undefined || v === null) return [];
  const items = typeof v === 'string' ? [v] : Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : fail(`${what} must be a string or a list of strings`);
  return expr.expression ? items : items.map((g) => (expr.prefix ?? '') + g);
}

/**
 * One external OIDC/JWT issuer of the authentication configuration, as
 * upstream's JWT authenticator: tokens whose (unverified) `iss` is not this
 * issuer are not its business (null); others are verified against the
 * issuer's JWKS (found by discovery, re-fetched when a token names an
 * unknown key id, at most every 5 s), the audiences, `exp`/`nbf`, the claim
 * validation rules, then mapped to a user by claim or CEL expression and
 * checked by the user validation rules. The mapped extra
 * `tenancy.plinth.dev/tenant` limits the tenants the identity may reach.
 */
export class JwtAuthenticator implements TokenAuthenticator {
  readonly name: string;
  private jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  private discovering: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  private lastDiscoveryFailure = 0;
  private readonly dispatcher: Agent | undefined;

  constructor(private readonly config: JwtIssuerConfig) {
    this.name = `jwt(${config.url})`;
    this.dispatcher = config.certificateAuthority ? new Agent({ connect: { ca: config.certificateAuthority } }) : undefined;
  }

  private fetch: typeof undiciFetch = (input, init) => undiciFetch(input, { ...init, dispatcher: this.dispatcher ?? init?.dispatcher });

  private async keySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (this.jwks) return this.jwks;
    if (Date.now() - this.lastDiscoveryFailure < DISCOVERY_RETRY_MS && !this.discovering) fail(`discovery of ${this.config.url} failed recently`);
    this.discovering ??= this.discover().finally(() => (this.discovering = undefined));
    this.jwks = await this.discovering;
    return this.jwks;
  }

  private async discover(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    const url = this.config.discoveryURL ?? `${this.config.url.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    try {
      const res = await this.fetch(url, { signal: AbortSignal.timeout(5000) });
      if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
      const doc = (await res.json()) as { issuer?: string; jwks_uri?: string };
      if (!this.config.discoveryURL && doc.issuer !== this.config.url) throw new Error(`issuer ${JSON.stringify(doc.issuer)} in the discovery document is not ${this.config.url}`);
      if (typeof doc.jwks_uri !== 'string' || !doc.jwks_uri.startsWith('https://')) throw new Error('the discovery document has no https jwks_uri');
      return createRemoteJWKSet(new URL(doc.jwks_uri), {
        cooldownDuration: JWKS_COOLDOWN_MS,
        timeoutDuration: 5000,
        [customFetch]: (u: string, init: RequestInit) => this.fetch(u, init as Parameters<typeof undiciFetch>[1]) as unknown as Promise<Response>,
      });
    } catch (err) {
      this.lastDiscoveryFailure = Date.now();
      fail(`discovery of ${this.config.url} failed: ${(err as Error).message}`);
    }
  }

  /**
   * Discovers the issuer now (its discovery document and JWKS location),
   * as upstream's health check of a new authenticator. Rejects with an
   * AuthenticationError saying why when the issuer cannot be reached.
   */
  async prepare(): Promise<void> {
    await this.keySet();
  }

  /** The issuer's URL. */
  get url(): string {
    return this.config.url;
  }

  /** Closes the connections to the issuer; tokens it is asked about afterwards fail. */
  async close(): Promise<void> {
    await this.dispatcher?.close();
  }

  async authenticateToken(token: string, _tenant: string, audiences?: string[]): Promise<AuthenticationResult | null> {
    const unverified = unverifiedPayload(token);
    if (!unverified || unverified.iss !== this.config.url) return null;
    const accepted = audiences ? this.config.audiences.filter((a) => audiences.includes(a)) : this.config.audiences;
    if (accepted.length === 0) fail('token audiences do not match the requested audiences');
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, await this.keySet(), { issuer: this.config.url, audience: accepted, algorithms: ALGORITHMS, requiredClaims: ['exp'] }));
    } catch (err) {
      if (err instanceof AuthenticationError) throw err;
      fail(`failed to verify token: ${(err as Error).message}`);
    }
    const user = this.claimsToUser(claims);
    const aud = Array.isArray(claims.aud) ? claims.aud : claims.aud ? [claims.aud] : [];
    return { user, audiences: aud.filter((a) => accepted.includes(a)) };
  }

  /** Claim validation, mapping and user validation; a failing or erroring CEL expression is an authentication error. */
  private claimsToUser(claims: JWTPayload): UserInfo {
    try {
      const activation = { claims: jsonToCel(claims) };
      this.validateClaims(claims, activation);
      const user = this.mapUser(claims, activation);
      for (const rule of this.config.userValidationRules) {
        if (rule.expression.evaluate({ user: jsonToCel(user) }, new CelBudget()) !== true) fail(rule.message || `user validation rule failed: ${rule.expression.expression}`);
      }
      return user;
    } catch (err) {
      if (err instanceof AuthenticationError) throw err;
      fail(`claim mapping failed: ${(err as Error).message}`);
    }
  }

  private validateClaims(claims: JWTPayload, activation: Record<string, unknown>): void {
    for (const rule of this.config.claimValidationRules) {
      if (rule.expression) {
        if (rule.expression.evaluate(activation, new CelBudget()) !== true) fail(rule.message || `claim validation rule failed: ${rule.expression.expression}`);
      } else if (claims[rule.claim!] !== rule.requiredValue) {
        fail(`required claim ${rule.claim} not found or does not match`);
      }
    }
  }

  private mapUser(claims: JWTPayload, activation: Record<string, unknown>): UserInfo {
    const c = this.config;
    if (c.username.claim === 'email' && claims.email_verified !== undefined && claims.email_verified !== true) fail('email not verified');
    const username = evalString(c.username, claims, activation, 'username');
    if (!username) fail(`claim ${c.username.claim ?? 'username'} not present`);
    const user: UserInfo = { username, groups: c.groups ? evalStrings(c.groups, claims, activation, 'groups') : [] };
    const uid = c.uid ? evalString(c.uid, claims, activation, 'uid') : undefined;
    if (uid) user.uid = uid;
    const extra: Record<string, string[]> = {};
    for (const e of c.extra) {
      const values = evalStrings({ expression: e.valueExpression }, claims, activation, `extra ${e.key}`);
      if (values.length > 0) extra[e.key] = values;
    }
    if (Object.keys(extra).length > 0) user.extra = extra;
    return user;
  }
}
