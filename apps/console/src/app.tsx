import { useEffect, useState } from 'preact/hooks';
import { Api, messageOf } from './api.js';
import { useRoute, href } from './router.js';
import { clearSession, loadSession, saveSession, type Session } from './session.js';
import { LoginView } from './views/login-view.js';
import { PlatformView } from './views/platform-view.js';
import { ResourceListView } from './views/resource-list-view.js';
import { ObjectView } from './views/object-view.js';
import { AdmissionView } from './views/admission-view.js';
import { AccessView } from './views/access-view.js';
import { ResourceNav } from './views/resource-nav.js';
import { ResourceSearch } from './views/search.js';
import { ThemeToggle } from './theme.js';

interface Whoami {
  username?: string;
  groups?: string[];
}

/** The console: login until a token is given, then the header (who am I), the navigation and the view of the route. */
export function App() {
  const [session, setSession] = useState<Session | null>(loadSession);
  if (!session) {
    return (
      <LoginView
        onLogin={(s) => {
          saveSession(s);
          setSession(s);
        }}
      />
    );
  }
  const switchTenant = (tenant: string) => {
    const next = { ...session, home: session.home ?? session.tenant, tenant };
    saveSession(next);
    setSession(next);
    location.hash = '';
  };
  return (
    <Shell
      key={session.tenant}
      api={new Api(session)}
      onSwitch={switchTenant}
      onLogout={() => {
        clearSession();
        setSession(null);
        location.hash = '';
      }}
    />
  );
}

/** The logged-in console: header, navigation, and the view of the route; `onSwitch` opens another tenant with the same token. */
function Shell({ api, onLogout, onSwitch }: { api: Api; onLogout: () => void; onSwitch: (tenant: string) => void }) {
  const route = useRoute();
  const [who, setWho] = useState<Whoami | string | null>(null);
  useEffect(() => {
    api
      .json<{ status?: { userInfo?: Whoami } }>(api.t('/apis/authentication.k8s.io/v1/selfsubjectreviews'), {
        method: 'POST',
        contentType: 'application/json',
        body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
      })
      .then((r) => setWho(r.status?.userInfo ?? {}))
      .catch((e) => setWho(messageOf(e)));
  }, [api.session.token]);
  const platform = api.session.tenant === 'default';
  const [view, ...rest] = route.parts;
  const current = (v: string) => (view === v || (!view && v === (platform ? 'platform' : '')) ? 'page' : undefined);
  return (
    <div class="shell">
      <header class="top">
        <a class="brand" href={href([])}>
          <span class="logo" aria-hidden="true">▦</span> Plinth
        </a>
        <span class="scope badge">{platform ? 'platform scope' : `tenant ${api.session.tenant}`}</span>
        {!platform && (api.session.home ?? api.session.tenant) === 'default' && (
          <button type="button" class="bar-button" onClick={() => onSwitch('default')}>
            Back to the platform scope
          </button>
        )}
        <ResourceSearch api={api} platform={platform} />
        <span class="whoami" data-testid="whoami" aria-live="polite">
          {who === null ? '…' : typeof who === 'string' ? <span class="error">{who}</span> : <>
            <span class="user">{who.username}</span> <small title={(who.groups ?? []).join(', ')}>{(who.groups ?? []).join(', ')}</small>
          </>}
        </span>
        <ThemeToggle />
        <button type="button" class="bar-button" onClick={onLogout}>
          Log out
        </button>
      </header>
      <div class="body">
        <aside class="side">
          <nav aria-label="Views">
            <ul class="views">
              {platform && (
                <li>
                  <a href={href(['platform'])} aria-current={current('platform')}>
                    Tenants
                  </a>
                </li>
              )}
              <li>
                <a href={href(['admission'])} aria-current={current('admission')}>
                  Admission
                </a>
              </li>
              <li>
                <a href={href(['access'])} aria-current={current('access')}>
                  What can I do here
                </a>
              </li>
            </ul>
            <ResourceNav api={api} current={view === 'r' ? rest.join('/') : undefined} />
          </nav>
        </aside>
        <main class="main">
          {view === 'r' && rest.length === 2 ? (
            <ResourceListView key={rest.join('/')} api={api} gv={rest[0]!} resource={rest[1]!} query={route.query} />
          ) : view === 'o' && rest.length === 4 ? (
            <ObjectView key={rest.join('/')} api={api} gv={rest[0]!} resource={rest[1]!} namespace={rest[2] === '_' ? '' : rest[2]!} name={rest[3]!} />
          ) : view === 'admission' ? (
            <AdmissionView api={api} />
          ) : view === 'access' ? (
            <AccessView api={api} namespace={route.query.get('ns') ?? 'default'} />
          ) : platform ? (
            <PlatformView api={api} onOpen={onSwitch} />
          ) : (
            <ResourceListView key="ns" api={api} gv="v1" resource="namespaces" query={route.query} />
          )}
        </main>
      </div>
    </div>
  );
}
