import { createHash } from 'node:crypto';
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { ConfigReloadMetrics } from '../observability/config-reload-metrics.js';
import { type AnonymousConfig, readAuthenticationConfiguration } from './authentication-configuration.js';
import type { JwtAuthenticatorSet } from './jwt-authenticator-set.js';
import { JwtAuthenticator } from './jwt.authenticator.js';

/** How long a replaced issuer keeps its connections, for the requests still checking tokens with it (upstream: one minute). */
const RETIRE_AFTER_MS = 60_000;
/** Events of the file's folder (an editor writes a file in several steps) are answered once, this long after the first. */
const SETTLE_MS = 100;

/** Upstream's hash of a configuration file's content: `sha256:<hex>`. */
export function authenticationConfigHash(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** What the reloader is built from. */
export interface AuthenticationConfigReloaderOptions {
  /** The file (PLINTH_AUTHENTICATION_CONFIG). */
  path: string;
  /** Its content as loaded at start-up. */
  initialText: string;
  /** The `anonymous` block of that content (undefined: none); a reload may not change it. */
  initialAnonymous: AnonymousConfig | undefined;
  /** The JWT issuers in force, replaced on a successful reload. */
  jwt: JwtAuthenticatorSet;
  logger: Logger;
  registry: Registry;
  /** This process's identity, hashed into the metrics' `apiserver_id_hash`. */
  apiServerId: string;
}

/** The outcome of one check of the file. */
export type ReloadOutcome = 'unchanged' | 'reloaded' | 'failed';

const sameAnonymous = (a: AnonymousConfig | undefined, b: AnonymousConfig | undefined) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Upstream's automatic reload of the authentication configuration: the
 * file is checked when its folder changes (inotify) and on an interval;
 * new content that parses and validates, leaves the `anonymous` block as
 * it was at start-up, and whose new issuers all answer discovery replaces
 * the JWT issuers for every request that starts afterwards. Any failure
 * keeps the issuers in force, logs a structured error and counts a
 * failure; content that is invalid is not tried again until it changes,
 * while a file that cannot be read or an issuer that cannot be reached is
 * tried again at the next check.
 */
export class AuthenticationConfigReloader {
  private tracked: string;
  private hash: string;
  private readonly metrics: ConfigReloadMetrics;
  private readonly idHash: string;
  private timer: NodeJS.Timeout | undefined;
  private watcher: FSWatcher | undefined;
  private settle: NodeJS.Timeout | undefined;
  private running: Promise<ReloadOutcome> | undefined;
  private again = false;
  private readonly retiring = new Map<NodeJS.Timeout, readonly JwtAuthenticator[]>();

  constructor(private readonly opts: AuthenticationConfigReloaderOptions) {
    this.tracked = opts.initialText;
    this.hash = authenticationConfigHash(opts.initialText);
    this.metrics = new ConfigReloadMetrics(opts.registry, 'authentication');
    this.idHash = authenticationConfigHash(opts.apiServerId);
    this.metrics.applied(this.idHash, this.hash);
  }

  /** The hash of the configuration in force. */
  get configHash(): string {
    return this.hash;
  }

  /** Watches the file's folder and checks the file every `intervalMs` as well (where inotify sees nothing: network file systems). */
  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.check(), intervalMs);
    this.timer.unref();
    const dir = path.dirname(path.resolve(this.opts.path));
    try {
      // The folder, not the file: editors and Kubernetes' ConfigMap volumes replace the file (rename, symlink swap).
      this.watcher = watch(dir, { persistent: false }, () => this.soon());
      this.watcher.on('error', (err) => {
        this.opts.logger.warn({ path: this.opts.path, err: err.message }, 'watching the authentication config folder failed; checking on the interval only');
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch (err) {
      this.opts.logger.warn({ path: this.opts.path, err: (err as Error).message }, 'cannot watch the authentication config folder; checking on the interval only');
    }
  }

  /** Stops watching and checking; closes the issuers waiting to retire. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.settle) clearTimeout(this.settle);
    this.watcher?.close();
    this.timer = undefined;
    this.settle = undefined;
    this.watcher = undefined;
    for (const [t, issuers] of this.retiring) {
      clearTimeout(t);
      for (const a of issuers) void a.close();
    }
    this.retiring.clear();
  }

  private soon(): void {
    if (this.settle) return;
    this.settle = setTimeout(() => {
      this.settle = undefined;
      void this.check();
    }, SETTLE_MS);
    this.settle.unref();
  }

  /**
   * Checks the file once and reloads it when its content changed. Checks
   * never overlap: one asked for while another runs runs after it. Never throws.
   */
  check(): Promise<ReloadOutcome> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.reload().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        void this.check();
      }
    });
    return this.running;
  }

  private async reload(): Promise<ReloadOutcome> {
    const { path: file, logger } = this.opts;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      // Not tracked: the file may come back.
      return this.failed('failed to read authentication config file', (err as Error).message);
    }
    if (text === this.tracked) return 'unchanged';
    let next: JwtAuthenticator[];
    try {
      const config = readAuthenticationConfiguration(text);
      if (!sameAnonymous(config.anonymous, this.opts.initialAnonymous)) throw new Error('anonymous: Forbidden: changed from initial configuration file');
      next = config.jwt.map((i) => new JwtAuthenticator(i));
    } catch (err) {
      // Invalid content stays invalid: not tried again until the file changes.
      this.tracked = text;
      return this.failed('failed to validate authentication config', (err as Error).message);
    }
    try {
      await Promise.all(next.map((a) => a.prepare()));
    } catch (err) {
      // Not tracked: the issuer may answer at the next check.
      await Promise.all(next.map((a) => a.close()));
      return this.failed('failed to update authentication config', (err as Error).message);
    }
    const previous = this.opts.jwt.replace(next);
    this.retire(previous);
    this.tracked = text;
    this.hash = authenticationConfigHash(text);
    this.metrics.applied(this.idHash, this.hash);
    this.record('success');
    logger.info({ path: file, hash: this.hash, issuers: next.map((a) => a.url) }, 'reloaded authentication config');
    return 'reloaded';
  }

  private failed(message: string, reason: string): ReloadOutcome {
    this.record('failure');
    this.opts.logger.error({ path: this.opts.path, err: reason }, `${message}: ${reason}; the authentication configuration in force stays`);
    return 'failed';
  }

  private record(status: 'success' | 'failure'): void {
    this.metrics.reloaded(status, this.idHash);
  }

  /** Closes replaced issuers once the requests that may still use them are done. */
  private retire(issuers: readonly JwtAuthenticator[]): void {
    if (issuers.length === 0) return;
    const t = setTimeout(() => {
      this.retiring.delete(t);
      for (const a of issuers) void a.close();
    }, RETIRE_AFTER_MS);
    t.unref();
    this.retiring.set(t, issuers);
  }
}
