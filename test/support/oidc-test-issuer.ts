import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import type { CertificateAuthority } from '../../apps/api/src/pki/certificate-authority.js';

/**
 * An OIDC issuer a test runs itself on loopback HTTPS: discovery, a JWKS
 * whose key can be rotated, and token signing. CORS is open, as
 * browser-facing issuers have it. Subclasses add endpoints through
 * {@link OidcTestIssuer.route} and fields of the discovery document
 * through {@link OidcTestIssuer.discoveryExtras}.
 */
export class OidcTestIssuer {
  url = '';
  /** How many times the JWKS was fetched. */
  jwksFetches = 0;
  private keys: { kid: string; privateKey: CryptoKey; jwk: JWK }[] = [];
  private server!: Server;

  /** Listens on a loopback port with a certificate of `ca`. */
  async start(ca: CertificateAuthority): Promise<void> {
    await this.rotate();
    const cert = await ca.issue({ commonName: 'issuer', ipAddresses: ['127.0.0.1'], dnsNames: ['localhost'], usage: 'server', validDays: 1 });
    this.server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      res.setHeader('Access-Control-Allow-Origin', '*');
      const u = new URL(req.url ?? '/', this.url);
      if (this.route(req, res, u)) return;
      res.setHeader('Content-Type', 'application/json');
      if (u.pathname === '/.well-known/openid-configuration') res.end(JSON.stringify({ issuer: this.url, jwks_uri: `${this.url}/keys`, ...this.discoveryExtras() }));
      else if (u.pathname === '/keys') {
        this.jwksFetches++;
        res.end(JSON.stringify({ keys: this.keys.map((k) => k.jwk) }));
      } else res.writeHead(404).end('{}');
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.url = `https://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  /** Replaces the signing key by a new one with a new key id. */
  async rotate(): Promise<void> {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const kid = `k${this.keys.length + 1}`;
    this.keys = [{ kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } }];
  }

  /** A token with `claims`, issued now by this issuer (or `iss`) for `aud` (default `plinth`), valid `expiresIn` seconds (600). */
  sign(claims: Record<string, unknown>, opts: { aud?: string; expiresIn?: number; iss?: string } = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const k = this.keys[0];
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: k.kid })
      .setIssuer(opts.iss ?? this.url)
      .setAudience(opts.aud ?? 'plinth')
      .setIssuedAt(now)
      .setExpirationTime(now + (opts.expiresIn ?? 600))
      .sign(k.privateKey);
  }

  /** Stops listening. */
  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }

  /** Answers a request of a subclass's own endpoints; true when it did. */
  protected route(_req: IncomingMessage, _res: ServerResponse, _url: URL): boolean {
    return false;
  }

  /** Fields a subclass adds to the discovery document. */
  protected discoveryExtras(): Record<string, unknown> {
    return {};
  }
}
