import { randomUUID } from 'node:crypto';
import {
  calculateJwkThumbprint,
  type CryptoKey,
  decodeJwt,
  exportJWK,
  importJWK,
  importPKCS8,
  type JWK,
  type JWTPayload,
  jwtVerify,
  SignJWT,
} from 'jose';
import { LRUCache } from 'lru-cache';
import { AuthenticationError } from './authenticator.js';

/** The `kubernetes.io` claim of a bound ServiceAccount token. */
export interface KubernetesClaim {
  namespace: string;
  serviceaccount: { name: string; uid: string };
}

/** The private claim naming the tenant a token was issued in. */
export const TENANT_CLAIM = 'plinth.dev/tenant';

/** The private claim naming the uid of the tenant a token was issued in: a new tenant of the same name refuses it. */
export const TENANT_UID_CLAIM = 'plinth.dev/tenant-uid';

/** The verified claims Plinth relies on. */
export interface ServiceAccountClaims {
  tenant: string;
  /** The uid of the tenant the token was issued in (undefined for tokens issued before tenants' uids were claimed). */
  tenantUid?: string;
  namespace: string;
  name: string;
  uid: string;
  audiences: string[];
  /** Expiry, seconds since the epoch. */
  exp: number;
  jti: string;
}

/** What a token is for. */
export interface TokenGrant {
  tenant: string;
  /** The uid of the tenant as it exists now (the token is refused once the tenant is deleted, whatever is created under its name later). */
  tenantUid?: string;
  namespace: string;
  name: string;
  uid: string;
  audiences: string[];
  expirationSeconds: number;
}

const PRIVATE_JWK_FIELDS = ['d', 'p', 'q', 'dp', 'dq', 'qi'];

/**
 * Signs and verifies ServiceAccount tokens (upstream's bound token claims:
 * iss, sub, aud, exp, iat, nbf, jti, `kubernetes.io`, plus the tenant).
 * Each tenant has its own issuer URL (`<issuer>/clusters/<tenant>`; the
 * `default` tenant uses `<issuer>` itself), so a token of one tenant fails
 * verification in another. Holds no mutable state beyond a verification cache.
 */
export class ServiceAccountTokens {
  private readonly verified = new LRUCache<string, ServiceAccountClaims>({ max: 10000 });

  private constructor(
    private readonly privateKey: CryptoKey,
    private readonly publicKey: CryptoKey,
    private readonly publicJwk: JWK,
    private readonly alg: 'ES256' | 'RS256',
    /** The key id (RFC 7638 thumbprint of the public key). */
    readonly kid: string,
    /** The issuer of the `default` tenant. */
    readonly issuer: string,
    /** Audiences accepted when a caller names none (upstream's --api-audiences; default: the issuer). */
    readonly apiAudiences: string[],
  ) {}

  /** Builds the signer from a PKCS#8 PEM key (EC P-256 or RSA). Throws when the key is unusable. */
  static async create(keyPem: string, issuer: string, apiAudiences: string[] = [issuer]): Promise<ServiceAccountTokens> {
    let alg: 'ES256' | 'RS256' = 'ES256';
    let privateKey: CryptoKey;
    try {
      privateKey = await importPKCS8(keyPem, 'ES256', { extractable: true });
    } catch {
      alg = 'RS256';
      privateKey = await importPKCS8(keyPem, 'RS256', { extractable: true });
    }
    const jwk = await exportJWK(privateKey);
    for (const f of PRIVATE_JWK_FIELDS) delete (jwk as Record<string, unknown>)[f];
    const kid = await calculateJwkThumbprint(jwk);
    const publicJwk: JWK = { ...jwk, kid, use: 'sig', alg };
    const publicKey = (await importJWK(publicJwk, alg)) as CryptoKey;
    return new ServiceAccountTokens(privateKey, publicKey, publicJwk, alg, kid, issuer.replace(/\/+$/, ''), apiAudiences);
  }

  /** The issuer URL of `tenant`. */
  issuerFor(tenant: string): string {
    return tenant === 'default' ? this.issuer : `${this.issuer}/clusters/${tenant}`;
  }

  /** The JSON Web Key Set that verifies every token this signer issues. */
  jwks(): { keys: JWK[] } {
    return { keys: [{ ...this.publicJwk }] };
  }

  /** The OpenID discovery document of `tenant`'s issuer (`jwks_uri` under `apiBase`, the tenant's URL). */
  openidConfiguration(tenant: string, apiBase: string): Record<string, unknown> {
    return {
      issuer: this.issuerFor(tenant),
      jwks_uri: `${apiBase.replace(/\/+$/, '')}/openid/v1/jwks`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [this.alg],
    };
  }

  /** Signs a token for `grant`; returns it with its expiry. No side effect. */
  async issue(grant: TokenGrant, now = Date.now()): Promise<{ token: string; expiresAt: Date }> {
    const iat = Math.floor(now / 1000);
    const exp = iat + grant.expirationSeconds;
    const kubernetes: KubernetesClaim = { namespace: grant.namespace, serviceaccount: { name: grant.name, uid: grant.uid } };
    const tenantClaims = grant.tenantUid ? { [TENANT_CLAIM]: grant.tenant, [TENANT_UID_CLAIM]: grant.tenantUid } : { [TENANT_CLAIM]: grant.tenant };
    const token = await new SignJWT({ 'kubernetes.io': kubernetes, ...tenantClaims })
      .setProtectedHeader({ alg: this.alg, kid: this.kid })
      .setIssuer(this.issuerFor(grant.tenant))
      .setSubject(`system:serviceaccount:${grant.namespace}:${grant.name}`)
      .setAudience(grant.audiences)
      .setIssuedAt(iat)
      .setNotBefore(iat)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(this.privateKey);
    return { token, expiresAt: new Date(exp * 1000) };
  }

  /** True when `token` looks like a JWT this signer issued for some tenant (unverified). */
  isOurs(token: string): boolean {
    const payload = unverifiedPayload(token);
    const iss = payload?.iss;
    return typeof iss === 'string' && (iss === this.issuer || iss.startsWith(`${this.issuer}/clusters/`));
  }

  /**
   * Verifies signature, issuer of `tenant`, audience (one of `audiences`,
   * default {@link apiAudiences}), nbf and exp. Returns null when the token
   * is not ours; throws AuthenticationError when it is but does not verify.
   */
  async verify(token: string, tenant: string, audiences = this.apiAudiences, now = Date.now()): Promise<ServiceAccountClaims | null> {
    if (!this.isOurs(token)) return null;
    const cacheKey = `${tenant}\u0000${audiences.join(',')}\u0000${token}`;
    let claims = this.verified.get(cacheKey);
    if (!claims) {
      claims = await this.verifyUncached(token, tenant, audiences, now);
      this.verified.set(cacheKey, claims);
    }
    if (claims.exp * 1000 <= now) throw new AuthenticationError('service account token has expired');
    return claims;
  }

  private async verifyUncached(token: string, tenant: string, audiences: string[], now: number): Promise<ServiceAccountClaims> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.publicKey, {
        issuer: this.issuerFor(tenant),
        audience: audiences,
        algorithms: [this.alg],
        currentDate: new Date(now),
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (err) {
      throw new AuthenticationError(`service account token is invalid: ${(err as Error).message}`);
    }
    const k = payload['kubernetes.io'] as Partial<KubernetesClaim> | undefined;
    const t = payload[TENANT_CLAIM];
    if (!k || typeof k.namespace !== 'string' || typeof k.serviceaccount?.name !== 'string' || typeof k.serviceaccount?.uid !== 'string' || t !== tenant) {
      throw new AuthenticationError('service account token is invalid: missing or mismatched kubernetes.io claims');
    }
    if (payload.sub !== `system:serviceaccount:${k.namespace}:${k.serviceaccount.name}`) {
      throw new AuthenticationError('service account token is invalid: sub does not match the kubernetes.io claim');
    }
    const aud = payload.aud === undefined ? [] : Array.isArray(payload.aud) ? payload.aud : [payload.aud];
    const tenantUid = payload[TENANT_UID_CLAIM];
    return {
      tenant,
      ...(typeof tenantUid === 'string' ? { tenantUid } : {}),
      namespace: k.namespace,
      name: k.serviceaccount.name,
      uid: k.serviceaccount.uid,
      audiences: aud.filter((a) => audiences.includes(a)),
      exp: payload.exp!,
      jti: typeof payload.jti === 'string' ? payload.jti : '',
    };
  }
}

/** The payload of a compact JWT without verifying it; undefined when `token` is not one. */
export function unverifiedPayload(token: string): JWTPayload | undefined {
  if (token.length > 64 * 1024 || token.split('.').length !== 3) return undefined;
  try {
    return decodeJwt(token);
  } catch {
    return undefined;
  }
}
