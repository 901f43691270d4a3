import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { OidcTestIssuer } from '../support/oidc-test-issuer.js';

/**
 * An OIDC issuer for the console's login test: besides discovery and the
 * JWKS, an authorization endpoint that signs in `claims` at once (no login
 * page) and redirects back with a code, and a token endpoint that redeems
 * the code only with the PKCE verifier whose S256 challenge it was given.
 * Records what it saw.
 */
export class PkceIssuer extends OidcTestIssuer {
  /** Token requests refused (wrong or missing verifier, unknown code). */
  refused: string[] = [];
  /** Challenge methods the authorization requests asked for. */
  challengeMethods: string[] = [];
  private readonly codes = new Map<string, { challenge: string; redirectUri: string; clientId: string }>();

  constructor(private readonly claims: Record<string, unknown>) {
    super();
  }

  protected override discoveryExtras(): Record<string, unknown> {
    return { authorization_endpoint: `${this.url}/authorize`, token_endpoint: `${this.url}/token` };
  }

  protected override route(req: IncomingMessage, res: ServerResponse, u: URL): boolean {
    if (u.pathname === '/authorize') {
      const q = u.searchParams;
      this.challengeMethods.push(q.get('code_challenge_method') ?? '');
      const code = randomBytes(16).toString('hex');
      this.codes.set(code, { challenge: q.get('code_challenge') ?? '', redirectUri: q.get('redirect_uri') ?? '', clientId: q.get('client_id') ?? '' });
      res.writeHead(302, { Location: `${q.get('redirect_uri')}?code=${code}&state=${encodeURIComponent(q.get('state') ?? '')}` }).end();
      return true;
    }
    if (u.pathname === '/token' && req.method === 'POST') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => void this.token(new URLSearchParams(body)).then((r) => res.writeHead(r.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(r.body))));
      return true;
    }
    return false;
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
    return { status: 200, body: { id_token: await this.sign(this.claims, { aud: grant.clientId }), token_type: 'Bearer', expires_in: 600 } };
  }
}
