import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import type { CertificateAuthority } from '../../apps/api/src/pki/certificate-authority.js';

/**
 * An OIDC issuer for the console's login test: discovery, JWKS, an
 * authorization endpoint that signs in `claims` at once (no login page)
 * and redirects back with a code, and a token endpoint that redeems the
 * code only with the PKCE verifier whose S256 challenge it was given.
 * CORS is open, as browser-facing issuers have it. Records what it saw.
 */
export class PkceIssuer {
  url = '';
  /** Token requests refused (wrong or missing verifier, unknown code). */
  refused: string[] = [];
  /** Challenge methods the authorization requests asked for. */
  challengeMethods: string[] = [];
  private key!: { privateKey: CryptoKey; jwk: JWK };
  private server!: Server;
  private readonly codes = new Map<string, { challenge: string; redirectUri: string; clientId: string }>();

  constructor(private readonly claims: Record<string, unknown>) {}

  /** Listens on a loopback port with a certificate of `ca`. */
  async start(ca: CertificateAuthority): Promise<void> {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    this.key = { privateKey, jwk: { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' } };
    const cert = await ca.issue({ commonName: 'issuer', ipAddresses: ['127.0.0.1'], dnsNames: ['localhost'], usage: 'server', validDays: 1 });
    this.server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      res.setHeader('Access-Control-Allow-Origin', '*');
      const u = new URL(req.url ?? '/', this.url);
      if (u.pathname === '/.well-known/openid-configuration') {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ issuer: this.url, jwks_uri: `${this.url}/keys`, authorization_endpoint: `${this.url}/authorize`, token_endpoint: `${this.url}/token` }));
      } else if (u.pathname === '/keys') {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ keys: [this.key.jwk] }));
      } else if (u.pathname === '/authorize') {
        const q = u.searchParams;
        this.challengeMethods.push(q.get('code_challenge_method') ?? '');
        const code = randomBytes(16).toString('hex');
        this.codes.set(code, { challenge: q.get('code_challenge') ?? '', redirectUri: q.get('redirect_uri') ?? '', clientId: q.get('client_id') ?? '' });
        res.writeHead(302, { Location: `${q.get('redirect_uri')}?code=${code}&state=${encodeURIComponent(q.get('state') ?? '')}` }).end();
      } else if (u.pathname === '/token' && req.method === 'POST') {
        let body = '';
        req.on('data', (c: Buffer) => (body += c));
        req.on('end', () => void this.token(new URLSearchParams(body)).then((r) => res.writeHead(r.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(r.body))));
      } else res.writeHead(404).end('{}');
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.url = `https://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  private async token(f: URLSearchParams): Promise<{ status: number; body: Record<string, unknown> }> {
    const grant = this.codes.get(f.get('code') ?? '');
    this.codes.delete(f.get('code') ?? '');
    const verifier = f.get('code_verifier') ?? '';
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    if (!grant || challenge !== grant.challenge || f.get('redirect_uri') !== grant.redirectUri || f.get('client_id') !== grant.clientId) {
      this.refused.push(f.get('code') ?? '');
      return { status: 400, body: { error: 'invalid_grant' } };
    }
    const now = Math.floor(Date.now() / 1000);
    const idToken = await new SignJWT(this.claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(this.url).setAudience(grant.clientId).setIssuedAt(now).setExpirationTime(now + 600).sign(this.key.privateKey);
    return { status: 200, body: { id_token: idToken, token_type: 'Bearer', expires_in: 600 } };
  }

  /** Stops listening. */
  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}
