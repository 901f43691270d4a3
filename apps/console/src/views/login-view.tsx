import { useEffect, useState } from 'preact/hooks';
import { configuredIssuers, finishLogin, type OidcIssuer, startLogin } from '../oidc.js';
import { type Session, tenantOfToken } from '../session.js';
import { ThemeToggle } from '../theme.js';

/**
 * Login: a bearer token (a ServiceAccount token from `kubectl create
 * token`, a static token, an OIDC ID token) pasted once, and the tenant it
 * is for (read from a ServiceAccount token's tenant claim when it has one;
 * `default` is the platform scope); or, when the server configures OIDC
 * issuers, the authorization-code flow with PKCE. Nothing is checked here:
 * every call carries the token and the server decides.
 */
export function LoginView({ onLogin }: { onLogin: (s: Session) => void }) {
  const [token, setToken] = useState('');
  const [tenant, setTenant] = useState('');
  const [issuers, setIssuers] = useState<OidcIssuer[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    finishLogin().then(
      (r) => r && onLogin({ token: r.token, tenant: r.tenant }),
      (e: Error) => setError(e.message),
    );
    configuredIssuers().then(setIssuers, () => setIssuers([]));
  }, []);
  const claimed = tenantOfToken(token.trim());
  return (
    <main class="login">
      <div class="login-head">
        <h1>
          <span class="logo" aria-hidden="true">▦</span> Plinth console
        </h1>
        <ThemeToggle />
      </div>
      {error && (
        <p class="problem" role="alert">
          {error}
        </p>
      )}
      <form
        class="login-form"
        onSubmit={(e) => {
          e.preventDefault();
          const t = token.trim();
          if (t) onLogin({ token: t, tenant: tenant.trim() || claimed || 'default' });
        }}
      >
        <label for="token">Bearer token</label>
        <textarea id="token" name="token" rows={6} autoComplete="off" spellcheck={false} value={token} onInput={(e) => setToken(e.currentTarget.value)} />
        <label for="tenant">Tenant (empty: {claimed ? `${claimed}, from the token` : 'the platform scope'})</label>
        <input id="tenant" name="tenant" value={tenant} onInput={(e) => setTenant(e.currentTarget.value)} placeholder={claimed ?? 'default'} />
        <button type="submit">Log in</button>
      </form>
      {issuers.map((i) => (
        <p key={i.issuer}>
          <button type="button" class="oidc" onClick={() => void startLogin(i, tenant.trim() || 'default').catch((e: Error) => setError(e.message))}>
            Log in with {i.issuer}
          </button>
        </p>
      ))}
      <p class="hint">
        The token stays in this tab's session storage; every request carries it, so RBAC decides what you see. Get one with{' '}
        <code>kubectl create token &lt;serviceaccount&gt;</code>.
      </p>
    </main>
  );
}
