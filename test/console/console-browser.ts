import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's Chromium (`.ci/run` installs the `chromium` package). */
export const CHROMIUM = '/usr/bin/chromium';

/** Where the console suites put their screenshots: outside the repository's tracked files (.test-tmp is ignored). */
export const SCREENSHOT_DIR = path.resolve('.test-tmp', 'console-screenshots');

/** Where the screenshots that docs/console.md shows go: the tests take them, so they show the console as it is. */
export const DOCS_SCREENSHOT_DIR = path.resolve('docs', 'console');

/** Starts headless Chromium as the suites use it (no sandbox as root, no background requests of its own). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-background-networking'] });
}

/** What one browser context saw that a console must never cause: CSP violations, page errors, requests to other origins. */
export interface PageWatch {
  problems: string[];
}

/**
 * A fresh context (its own session storage: one login) trusting any
 * certificate (the test server's CA is not the browser's), and a page in
 * it whose CSP violations, uncaught errors and requests to any origin but
 * `origin` are collected into the returned watch.
 */
export async function openConsole(browser: Browser, origin: string, options: { colorScheme?: 'light' | 'dark' } = {}): Promise<{ context: BrowserContext; page: Page; watch: PageWatch }> {
  // Reduced motion: Pico's transitions (0.2 s) then take no time, so a check of colours right after a theme change
  // (axe's contrast rule) sees the new theme's colours, not a blend mid-transition.
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 }, colorScheme: options.colorScheme ?? 'light', reducedMotion: 'reduce' });
  const page = await context.newPage();
  const watch: PageWatch = { problems: [] };
  page.on('console', (m) => {
    if (/Content.Security.Policy/i.test(m.text())) watch.problems.push(`CSP: ${m.text()}`);
  });
  page.on('pageerror', (e) => watch.problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(origin) && !u.startsWith('data:')) watch.problems.push(`third-party request: ${u}`);
  });
  return { context, page, watch };
}

/** Pastes `token` (and `tenant`, when given) into the login form and logs in. */
export async function logIn(page: Page, origin: string, token: string, tenant?: string): Promise<void> {
  await page.goto(`${origin}/console/`);
  await page.fill('#token', token);
  if (tenant) await page.fill('#tenant', tenant);
  await page.click('button[type=submit]');
  await page.waitForSelector('[data-testid=whoami] span');
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** One axe-core finding: rule id, impact and the elements it names. */
export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe-core (WCAG 2 A and AA rules) on the page as it is and returns
 * its violations. axe is evaluated through the DevTools protocol, not a
 * script tag, so the console's CSP stays as it is served.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(`${axeSource};0`);
  return (await page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))`)) as AxeViolation[];
}

/** axe's violations as one readable line each. */
export function describeViolations(vs: AxeViolation[]): string {
  return vs.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`).join('\n');
}

/**
 * Saves a screenshot named `name` (the viewport, or the whole page with
 * `fullPage`) into {@link SCREENSHOT_DIR}; with `docs`, into
 * {@link DOCS_SCREENSHOT_DIR} instead, where docs/console.md shows it.
 */
export async function screenshot(page: Page, name: string, options: { docs?: boolean; fullPage?: boolean } = {}): Promise<void> {
  const dir = options.docs ? DOCS_SCREENSHOT_DIR : SCREENSHOT_DIR;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: options.fullPage ?? false });
}
