import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { AuthorizationConfig } from '../config/authorization-config.js';
import { AuthorizationConfigReloader } from './authorization-config-reloader.js';
import type { AuthorizationMetrics } from './authorization-metrics.js';
import { AuthorizerChain, chainEntries } from './authorizer-chain.js';
import type { NamedAuthorizer } from './authorizer-union.js';
import { type AuthorizerEntry, parseAuthorizationConfiguration } from './config/authorization-configuration.js';
import type { RbacAuthorizer } from './rbac-authorizer.js';
import { SarClient } from './webhook/sar-client.js';
import { WebhookAuthorizer } from './webhook/webhook-authorizer.js';

/** The authorizer in force and what keeps it current. */
export interface BuiltAuthorizer {
  chain: AuthorizerChain;
  /** Set when PLINTH_AUTHORIZATION_CONFIG names a file (started by {@link startReloading}). */
  reloader?: AuthorizationConfigReloader;
  /** Stops reloading and closes the webhooks' connections. */
  close(): Promise<void>;
}

function closeWebhooks(entries: readonly NamedAuthorizer[]): void {
  for (const e of entries) if (e.authorizer instanceof WebhookAuthorizer) void e.authorizer.close();
}

/**
 * The request path's authorizer: with no PLINTH_AUTHORIZATION_CONFIG,
 * `system:masters` then RBAC (then `tail`), as before; with one, the file's
 * chain, read and validated now: an unreadable file throws the fs error (its
 * path named), an invalid one an Error whose one line starts with
 * `PLINTH_AUTHORIZATION_CONFIG <file>:` and lists the field errors (so
 * start-up stops with exit 2). Reads the file and the kubeconfigs it names.
 */
export function buildAuthorizer(config: AuthorizationConfig, rbac: RbacAuthorizer, tail: NamedAuthorizer, metrics: AuthorizationMetrics, logger: Logger): BuiltAuthorizer {
  const file = config.authorizationConfigFile;
  if (!file) {
    const chain = new AuthorizerChain(rbac, [{ type: 'RBAC', name: 'rbac', authorizer: rbac }], tail, metrics);
    return { chain, close: async () => undefined };
  }
  const text = readFileSync(file, 'utf8');
  let entries: AuthorizerEntry[];
  try {
    entries = parseAuthorizationConfiguration(text);
  } catch (err) {
    throw new Error(`PLINTH_AUTHORIZATION_CONFIG ${file}: ${(err as Error).message.replace(/\s*\n\s*/g, ' ')}`);
  }
  const build = (list: readonly AuthorizerEntry[]) =>
    chainEntries(list, rbac, (e) => new WebhookAuthorizer(e.webhook, { client: new SarClient(e.webhook.connection), metrics, metricName: e.name }));
  const chain = new AuthorizerChain(rbac, build(entries), tail, metrics);
  logger.info({ file, authorizers: entries.map((e) => `${e.type}/${e.name}`) }, 'authorization chain configured');
  const reloader = new AuthorizationConfigReloader({ file, initialText: text, initialEntries: entries, chain, build, release: closeWebhooks, metrics, logger });
  return {
    chain,
    reloader,
    close: async () => {
      reloader.stop();
      closeWebhooks(chain.platform);
    },
  };
}
