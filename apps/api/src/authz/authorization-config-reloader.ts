import { createHash } from 'node:crypto';
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import type { AuthorizationMetrics } from './authorization-metrics.js';
import type { AuthorizerChain } from './authorizer-chain.js';
import type { NamedAuthorizer } from './authorizer-union.js';
import { type AuthorizerEntry, parseAuthorizationConfiguration } from './config/authorization-configuration.js';

/** What the reloader works with. */
export interface AuthorizationConfigReloaderOptions {
  /** The AuthorizationConfiguration file (PLINTH_AUTHORIZATION_CONFIG). */
  file: string;
  /** Its content as loaded at start-up. */
  initialText: string;
  /** The entries it was loaded into. */
  initialEntries: readonly AuthorizerEntry[];
  chain: AuthorizerChain;
  /** Builds the chain's authorizers from the file's entries. */
  build: (entries: readonly AuthorizerEntry[]) => NamedAuthorizer[];
  /** Releases what an old chain's authorizers hold (webhook connections). */
  release: (old: readonly NamedAuthorizer[]) => void;
  metrics: AuthorizationMetrics;
  logger: Logger;
}

/** The outcome of one look at the file. */
export type ReloadOutcome = 'unchanged' | 'reloaded' | 'failed';

const hashOf = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Upstream's automatic reload of the authorization configuration: the file
 * is looked at when its folder changes (a watch, which sees editors' and
 * ConfigMaps' replace-by-rename) and every `intervalMs` besides (upstream
 * polls each minute); when its content changed it is parsed and validated
 * in full, and the new chain replaces the old for the requests that start
 * after. A file that does not parse or validate, or drops a non-webhook
 * type the server started with, keeps the chain in force; either way the
 * outcome is logged and counted
 * (apiserver_authorization_config_controller_automatic_reloads_total{status}).
 */
export class AuthorizationConfigReloader {
  private hash: string;
  private readonly requiredTypes: ReadonlySet<string>;
  private readonly idHash = `sha256:${createHash('sha256').update(`${hostname()}-${process.pid}`).digest('hex')}`;
  private timer: NodeJS.Timeout | undefined;
  private watcher: FSWatcher | undefined;
  private debounce: NodeJS.Timeout | undefined;

  constructor(private readonly opts: AuthorizationConfigReloaderOptions) {
    this.hash = hashOf(opts.initialText);
    this.requiredTypes = new Set(opts.initialEntries.map((e) => e.type).filter((t) => t !== 'Webhook'));
    opts.metrics.reload.applied(this.idHash, `sha256:${this.hash}`);
  }

  /** Starts watching the file's folder and polling every `intervalMs`. */
  start(intervalMs: number): void {
    this.timer = setInterval(() => this.reload(), intervalMs);
    this.timer.unref();
    const name = path.basename(this.opts.file);
    try {
      this.watcher = watch(path.dirname(this.opts.file), { persistent: false }, (_event, changed) => {
        if (changed !== null && changed !== name && !String(changed).startsWith('..')) return;
        if (this.debounce) clearTimeout(this.debounce);
        this.debounce = setTimeout(() => this.reload(), 100);
        this.debounce.unref();
      });
      this.watcher.on('error', () => undefined);
    } catch {
      // Polling alone then (a folder that cannot be watched).
    }
  }

  /** Stops watching and polling. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.debounce) clearTimeout(this.debounce);
    this.watcher?.close();
    this.timer = this.debounce = this.watcher = undefined;
  }

  /** Looks at the file now and reloads it if its content changed. Never throws. */
  reload(): ReloadOutcome {
    const { file, logger, metrics, chain } = this.opts;
    const now = Date.now() / 1000;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      return this.failed(now, `error reading authorization config file ${file}: ${(err as Error).message}`);
    }
    const hash = hashOf(text);
    if (hash === this.hash) return 'unchanged';
    let built: NamedAuthorizer[];
    try {
      built = this.opts.build(parseAuthorizationConfiguration(text, this.requiredTypes));
    } catch (err) {
      // Not tried again until the content changes once more.
      this.hash = hash;
      return this.failed(now, `error loading authorization config file ${file}: ${(err as Error).message}; the authorizers in force stay`);
    }
    const old = chain.platform;
    chain.replace(built);
    this.opts.release(old);
    this.hash = hash;
    metrics.reload.applied(this.idHash, `sha256:${hash}`);
    metrics.reload.reloaded('success', this.idHash, now);
    logger.info({ file, authorizers: built.map((b) => `${b.type}/${b.name}`) }, 'reloaded authorization config');
    return 'reloaded';
  }

  private failed(now: number, message: string): ReloadOutcome {
    this.opts.metrics.reload.reloaded('failure', this.idHash, now);
    this.opts.logger.error({ file: this.opts.file }, message);
    return 'failed';
  }
}
