import { Counter, Gauge, type Registry } from 'prom-client';

/** Which configuration file: it names the metrics (`apiserver_<kind>_config_controller_…`, as upstream's). */
export type ReloadedConfig = 'authentication' | 'authorization' | 'encryption';

/** Upstream's help texts where a controller words them its own way (the encryption configuration's do). */
export interface ReloadMetricHelp {
  reloads: string;
  lastReload: string;
}

/**
 * Upstream's three metrics of a configuration file reloaded without a restart
 * (authentication, authorization and encryption configuration controllers):
 * reloads by status, the time of the last one by status, and the hash of the
 * configuration in force. One per file and registry.
 */
export class ConfigReloadMetrics {
  readonly reloads: Counter<'status' | 'apiserver_id_hash'>;
  readonly lastReload: Gauge<'status' | 'apiserver_id_hash'>;
  readonly configInfo: Gauge<'apiserver_id_hash' | 'hash'>;

  constructor(registry: Registry, config: ReloadedConfig, help?: ReloadMetricHelp) {
    const registers = [registry];
    const prefix = `apiserver_${config}_config_controller`;
    this.reloads = new Counter({
      name: `${prefix}_automatic_reloads_total`,
      help: help?.reloads ?? `Total number of automatic reloads of ${config} configuration split by status and apiserver identity.`,
      labelNames: ['status', 'apiserver_id_hash'],
      registers,
    });
    this.lastReload = new Gauge({
      name: `${prefix}_automatic_reload_last_timestamp_seconds`,
      help: help?.lastReload ?? `Timestamp of the last automatic reload of ${config} configuration split by status and apiserver identity.`,
      labelNames: ['status', 'apiserver_id_hash'],
      registers,
    });
    this.configInfo = new Gauge({
      name: `${prefix}_last_config_info`,
      help: `Information about the last applied ${config} configuration with hash as label, split by apiserver identity.`,
      labelNames: ['apiserver_id_hash', 'hash'],
      registers,
    });
  }

  /** The configuration whose hash is `hash` is in force (the previous one's series goes). */
  applied(apiserverIdHash: string, hash: string): void {
    this.configInfo.reset();
    this.configInfo.set({ apiserver_id_hash: apiserverIdHash, hash }, 1);
  }

  /** One automatic reload ended with `status` at `atSeconds` (Unix time; now by default). */
  reloaded(status: 'success' | 'failure', apiserverIdHash: string, atSeconds = Date.now() / 1000): void {
    this.reloads.inc({ status, apiserver_id_hash: apiserverIdHash });
    this.lastReload.set({ status, apiserver_id_hash: apiserverIdHash }, atSeconds);
  }
}
