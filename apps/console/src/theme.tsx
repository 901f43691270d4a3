import { useEffect, useState } from 'preact/hooks';

/** The colour theme: the operating system's (`prefers-color-scheme`) until the user picks one with the toggle. */
export type Theme = 'light' | 'dark';

const KEY = 'plinth.console.theme';
const listeners = new Set<() => void>();
const media = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;

/** The theme the user picked (kept in localStorage: a preference, not a secret), or null to follow the system. */
function picked(): Theme | null {
  try {
    const v = localStorage.getItem(KEY);
    return v === 'light' || v === 'dark' ? v : null;
  } catch {
    return null;
  }
}

/** The theme in force: the user's pick, else the system's. */
export function currentTheme(): Theme {
  return picked() ?? (media?.matches ? 'dark' : 'light');
}

/**
 * Applies the user's pick as Pico's `data-theme` on `<html>` (an attribute,
 * not a style: the CSP stays strict); without a pick the attribute is
 * absent and Pico follows `prefers-color-scheme`.
 */
export function applyTheme(): void {
  const p = picked();
  if (p) document.documentElement.setAttribute('data-theme', p);
  else document.documentElement.removeAttribute('data-theme');
  for (const l of listeners) l();
}

/** Picks `t` for this browser (every tab, next visits too). */
export function setTheme(t: Theme): void {
  try {
    localStorage.setItem(KEY, t);
  } catch {
    // Storage refused (private mode): the pick lasts for this page only.
  }
  document.documentElement.setAttribute('data-theme', t);
  for (const l of listeners) l();
}

/** The theme in force, re-rendered when the user toggles it or the system's changes. */
export function useTheme(): Theme {
  const [theme, set] = useState(currentTheme);
  useEffect(() => {
    const on = () => set(currentTheme());
    listeners.add(on);
    media?.addEventListener('change', on);
    return () => {
      listeners.delete(on);
      media?.removeEventListener('change', on);
    };
  }, []);
  return theme;
}

/** A toggle button between the light and the dark theme (pressed: dark). */
export function ThemeToggle() {
  const theme = useTheme();
  const dark = theme === 'dark';
  return (
    <button type="button" class="theme-toggle bar-button" aria-pressed={dark} data-testid="theme-toggle" onClick={() => setTheme(dark ? 'light' : 'dark')}>
      <span aria-hidden="true">{dark ? '☾' : '☀'}</span> Dark mode
    </button>
  );
}
