import { ServiceResolver } from '@plinth/admission';
import { rejected } from './config-error.js';
import type { EnvironmentVariables } from './environment-variables.dto.js';

/** The admission-webhook part of AppConfig: service addresses, snapshot refresh, and where webhooks may call (see webhook-egress-policy.ts). */
export interface WebhookConfig {
  /** Admission webhook `service` references → addresses (docs/admission.md); '' when unset. */
  webhookServiceMap: string;
  /** Webhook configuration snapshots are refreshed after this; changes take effect within twice this. */
  webhookRefreshMs: number;
  /** Whether tenants' webhook URLs may reach private ranges (RFC 1918, CGNAT, fc00::/7). Default true. */
  webhookAllowPrivateNetworks: boolean;
  /** Tenants whose webhooks may call loopback and the server's own addresses, with detailed errors (local development). */
  webhookTrustedTenants: string[];
}

/**
 * The webhook settings of the validated environment, defaults filled in.
 * Pure; throws ConfigError when PLINTH_WEBHOOK_SERVICE_MAP does not parse
 * (it is kept as text: it is parsed here only to fail start-up early).
 */
export function readWebhookConfig(env: EnvironmentVariables): WebhookConfig {
  try {
    ServiceResolver.parse(env.PLINTH_WEBHOOK_SERVICE_MAP);
  } catch (err) {
    throw rejected('PLINTH_WEBHOOK_SERVICE_MAP', err);
  }
  return {
    webhookServiceMap: env.PLINTH_WEBHOOK_SERVICE_MAP ?? '',
    webhookRefreshMs: env.PLINTH_WEBHOOK_REFRESH_MS ?? 500,
    webhookAllowPrivateNetworks: (env.PLINTH_WEBHOOK_PRIVATE_NETWORKS ?? 'allow') === 'allow',
    webhookTrustedTenants: env.PLINTH_WEBHOOK_TRUSTED_TENANTS ? env.PLINTH_WEBHOOK_TRUSTED_TENANTS.split(',') : [],
  };
}
