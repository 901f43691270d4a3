/**
 * Login through an OIDC issuer configured in the server's
 * AuthenticationConfiguration: the authorization-code flow with PKCE
 * (S256) as a public client (RFC 7636, OAuth 2.0 for browser apps). The
 * verifier and state wait in sessionStorage across the redirect; the ID
 * token the issuer returns becomes the session's bearer token.
 */

/** An issuer the console may send users to: its URL and the client id (the first audience the server accepts). */
export interface OidcIssuer {
  issuer: string;
  clientId: string;
}

interface Pending {
  issuer: string;
  clientId: string;
  verifier: string;
  state: string;
  tokenEndpoint: string;
  tenant: string;
}

const PENDING = 'plinth.console.oidc';

function base64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function random(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** The page the issuer sends the user back to: the console itself, without query or hash. */
export function redirectUri(): string {
  return `${location.origin}/console/`;
}

/** The issuers the server accepts ID tokens of (`/console/oidc.json`); none when it configures none. */
export async function configuredIssuers(): Promise<OidcIssuer[]> {
  const res = await fetch('/console/oidc.json', { cache: 'no-store' });
  if (!res.ok) return [];
  return ((await res.json()) as { issuers?: OidcIssuer[] }).issuers ?? [];
}

/** Starts the flow: reads the issuer's discovery document, keeps the PKCE verifier and state, and navigates to its authorization endpoint. */
export async function startLogin(i: OidcIssuer, tenant: string): Promise<void> {
  const disc = (await (await fetch(`${i.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`)).json()) as { authorization_endpoint: string; token_endpoint: string };
  const verifier = random();
  const state = random();
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  const pending: Pending = { issuer: i.issuer, clientId: i.clientId, verifier, state, tokenEndpoint: disc.token_endpoint, tenant };
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  const q = new URLSearchParams({ response_type: 'code', client_id: i.clientId, redirect_uri: redirectUri(), scope: 'openid profile email', state, code_challenge: challenge, code_challenge_method: 'S256' });
  location.assign(`${disc.authorization_endpoint}?${q}`);
}

/**
 * Finishes the flow when the page was opened by the issuer's redirect
 * (`?code=…&state=…`): checks the state, redeems the code with the
 * verifier, and removes code and state from the address bar at once.
 * Resolves the ID token and tenant, or null when this is no redirect.
 */
export async function finishLogin(): Promise<{ token: string; tenant: string } | null> {
  const q = new URLSearchParams(location.search);
  const code = q.get('code');
  const state = q.get('state');
  const error = q.get('error');
  if (!code && !error) return null;
  history.replaceState(null, '', redirectUri());
  const raw = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  if (error) throw new Error(`the issuer refused the login: ${error} ${q.get('error_description') ?? ''}`);
  if (!raw) throw new Error('no login was started in this tab');
  const p = JSON.parse(raw) as Pending;
  if (state !== p.state) throw new Error('the login answer does not match the request (state)');
  const body = new URLSearchParams({ grant_type: 'authorization_code', code: code!, redirect_uri: redirectUri(), client_id: p.clientId, code_verifier: p.verifier });
  const res = await fetch(p.tokenEndpoint, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body });
  const tokens = (await res.json()) as { id_token?: string; error?: string; error_description?: string };
  if (!res.ok || !tokens.id_token) throw new Error(`the issuer did not give an ID token: ${tokens.error ?? res.status} ${tokens.error_description ?? ''}`);
  return { token: tokens.id_token, tenant: p.tenant };
}
