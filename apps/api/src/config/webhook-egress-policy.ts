import os from 'node:os';
import { WebhookEgressPolicy } from '@plinth/admission';
import type { AppConfig } from './app-config.js';

/**
 * The platform's webhook egress policy (admission and CRD conversion
 * webhooks obey the same one): the configured settings, and this host's
 * addresses as its own.
 */
export function webhookEgressPolicy(config: AppConfig): WebhookEgressPolicy {
  const own = Object.values(os.networkInterfaces())
    .flat()
    .flatMap((i) => (i ? [i.address] : []));
  if (config.host !== '0.0.0.0' && config.host !== '::') own.push(config.host);
  return new WebhookEgressPolicy({ allowPrivateNetworks: config.webhookAllowPrivateNetworks, trustedTenants: config.webhookTrustedTenants, ownAddresses: own });
}
