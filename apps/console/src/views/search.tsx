import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { type ServedResource, servedResources } from '../discovery.js';
import { href } from '../router.js';

/** One thing the search can open: a view of the console or a served resource's list. */
export interface SearchEntry {
  title: string;
  detail: string;
  href: string;
  /** Lower-case words it answers to: kind, plural, short names, group. */
  words: string[];
}

/** The entries of the console's own views (Tenants in the platform scope only). */
function viewEntries(platform: boolean): SearchEntry[] {
  const views: SearchEntry[] = [];
  if (platform) views.push({ title: 'Tenants', detail: 'view', href: href(['platform']), words: ['tenants', 'platform'] });
  views.push({ title: 'Admission', detail: 'view', href: href(['admission']), words: ['admission', 'webhooks', 'policies'] });
  views.push({ title: 'What can I do here', detail: 'view', href: href(['access']), words: ['access', 'rules', 'rbac', 'what can i do here'] });
  return views;
}

function resourceEntry(r: ServedResource): SearchEntry {
  const short = r.shortNames ?? [];
  return {
    title: r.kind,
    detail: `${r.name}${r.group ? `.${r.group}` : ''} · ${r.gv}${short.length ? ` · ${short.join(', ')}` : ''}${r.namespaced ? '' : ' · cluster'}`,
    href: href(['r', r.gv, r.name]),
    words: [r.kind.toLowerCase(), r.name, ...short, r.group, `${r.name}.${r.group}`].filter(Boolean),
  };
}

/** Whether the letters of `q` appear in `w` in order. */
function subsequence(q: string, w: string): boolean {
  let i = 0;
  for (const c of w) if (c === q[i]) i++;
  return i === q.length;
}

/** How well `e` answers `q` (0: not at all): exact word, then prefix, then substring, then the letters in order. */
export function score(e: SearchEntry, q: string): number {
  let best = 0;
  for (const w of e.words) {
    const s = w === q ? 100 : w.startsWith(q) ? 80 - Math.min(30, w.length - q.length) : w.includes(q) ? 40 : subsequence(q, w) ? 10 : 0;
    best = Math.max(best, s);
  }
  return best;
}

/** The entries matching `query`, best first (all of them, in order, for an empty query). */
export function search(entries: SearchEntry[], query: string, max = 50): SearchEntry[] {
  const q = query.trim().toLowerCase();
  if (!q) return entries.slice(0, max);
  return entries
    .map((e, i) => ({ e, i, s: score(e, q) }))
    .filter((x) => x.s > 0)
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .slice(0, max)
    .map((x) => x.e);
}

/** Whether a key press happens while the user types into a field (then `/` is a character, not the shortcut). */
function typing(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  return !!el && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName));
}

/**
 * The resource search: `/` (outside a text field) or Ctrl-K / ⌘-K, or
 * the header's button, opens a modal dialog whose combobox matches the
 * console's views and every served resource (kind, plural, short names,
 * group) as you type; arrows move, Enter opens, Escape closes.
 */
export function ResourceSearch({ api, platform }: { api: Api; platform: boolean }) {
  const [open, setOpen] = useState(false);
  const [resources, setResources] = useState<ServedResource[]>([]);
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const dialog = useRef<HTMLDialogElement>(null);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    servedResources(api).then(setResources, () => setResources([]));
  }, [api.session.token, api.session.tenant]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const ctrlK = (e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'k';
      if (ctrlK || (e.key === '/' && !e.ctrlKey && !e.metaKey && !e.altKey && !typing(e.target))) {
        e.preventDefault();
        setOpen(true);
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);

  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (open && !d.open) {
      setQuery('');
      setActive(0);
      d.showModal();
      input.current?.focus();
    } else if (!open && d.open) d.close();
  }, [open]);

  const entries = useMemo(() => [...viewEntries(platform), ...resources.map(resourceEntry)], [platform, resources]);
  const found = useMemo(() => search(entries, query), [entries, query]);
  const go = (e: SearchEntry | undefined) => {
    if (!e) return;
    setOpen(false);
    location.hash = e.href;
  };
  const current = Math.min(active, Math.max(0, found.length - 1));

  return (
    <>
      <button type="button" class="search-open bar-button" onClick={() => setOpen(true)} aria-keyshortcuts="/ Control+K" data-testid="search-open">
        Search resources <kbd>/</kbd>
      </button>
      <dialog ref={dialog} class="search" aria-labelledby="search-title" onClose={() => setOpen(false)} data-testid="search">
        <article>
          <header>
            <h2 id="search-title">Search resources</h2>
          </header>
          <input
            ref={input}
            type="text"
            role="combobox"
            aria-label="Resource, kind, short name or view"
            aria-expanded={found.length > 0}
            aria-controls="search-results"
            aria-autocomplete="list"
            aria-activedescendant={found.length ? `search-opt-${current}` : undefined}
            autoComplete="off"
            spellcheck={false}
            placeholder="configmaps, cm, Deployment, tenants…"
            value={query}
            onInput={(e) => {
              setQuery(e.currentTarget.value);
              setActive(0);
            }}
            onKeyDown={(e) => {
              if (e.key === 'ArrowDown') {
                e.preventDefault();
                setActive(Math.min(found.length - 1, current + 1));
              } else if (e.key === 'ArrowUp') {
                e.preventDefault();
                setActive(Math.max(0, current - 1));
              } else if (e.key === 'Enter') {
                e.preventDefault();
                go(found[current]);
              }
            }}
          />
          {found.length > 0 && (
          <ul id="search-results" role="listbox" aria-label="Matches">
            {found.map((e, i) => (
              <li key={e.href} id={`search-opt-${i}`} role="option" aria-selected={i === current} class={i === current ? 'active' : undefined} onClick={() => go(e)}>
                <strong>{e.title}</strong> <small>{e.detail}</small>
              </li>
            ))}
          </ul>
          )}
          {found.length === 0 && <p class="note">Nothing matches “{query}”.</p>}
          <footer>
            <small>
              <kbd>↑</kbd> <kbd>↓</kbd> to move, <kbd>Enter</kbd> to open, <kbd>Esc</kbd> to close
            </small>
          </footer>
        </article>
      </dialog>
    </>
  );
}
