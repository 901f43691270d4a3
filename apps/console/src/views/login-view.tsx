import { useState } from 'preact/hooks';
import { type Session, tenantOfToken } from '../session.js';

/**
 * Login: a bearer token (a ServiceAccount token from `kubectl create
 * token`, a static token, an OIDC ID token) pasted once, and the tenant it
 * is for (read from a ServiceAccount token's tenant claim when it has one;
 * `default` is the platform scope). Nothing is checked here: every call
 * carries the token and the server decides.
 */
export function LoginView({ onLogin }: { onLogin: (s: Session) => void }) {
  const [token, setToken] = useState('');
  const [tenant, setTenant] = useState('');
  const claimed = tenantOfToken(token.trim());
  return (
    <main class="login">
      <h1>Plinth console</h1>
      <form
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
      <p class="hint">
        The token stays in this tab's session storage; every request carries it, so RBAC decides what you see. Get one with{' '}
        <code>kubectl create token &lt;serviceaccount&gt;</code>.
      </p>
    </main>
  );
}
