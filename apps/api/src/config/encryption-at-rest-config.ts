import type { EnvironmentVariables } from './environment-variables.dto.js';

/** The encryption-at-rest part of AppConfig (docs/encryption.md; kube-apiserver's --encryption-provider-config and its companions). */
export interface EncryptionAtRestConfig {
  /** Encryption at rest: the EncryptionConfiguration file, whether it is reloaded when it changes, and how often that is checked. */
  encryption: {
    providerConfigFile?: string;
    automaticReload: boolean;
    reloadIntervalSeconds: number;
    /** PLINTH_ENCRYPTION_ROTATION_ROWS_PER_SECOND (0: no limit). */
    rotationRowsPerSecond: number;
    /** PLINTH_ENCRYPTION_READ_CACHE_MB in bytes (0: every read decrypts). */
    readCacheBytes: number;
    /** Undefined: beside the object database (see defaultKeyStoreUrl). */
    keyStoreUrl?: string;
    /** Undefined: upstream's 60 s healthy, 10 s unhealthy. */
    kmsStatusIntervalSeconds?: number;
  };
}

/** The encryption-at-rest settings of the validated environment, defaults filled in. Pure; never throws. */
export function readEncryptionAtRestConfig(env: EnvironmentVariables): EncryptionAtRestConfig {
  return {
    encryption: {
      providerConfigFile: env.PLINTH_ENCRYPTION_PROVIDER_CONFIG || undefined,
      automaticReload: env.PLINTH_ENCRYPTION_PROVIDER_CONFIG_AUTOMATIC_RELOAD === 'true',
      reloadIntervalSeconds: env.PLINTH_ENCRYPTION_PROVIDER_CONFIG_RELOAD_INTERVAL_SECONDS ?? 60,
      rotationRowsPerSecond: env.PLINTH_ENCRYPTION_ROTATION_ROWS_PER_SECOND ?? 0,
      readCacheBytes: (env.PLINTH_ENCRYPTION_READ_CACHE_MB ?? 64) * 1024 * 1024,
      keyStoreUrl: env.PLINTH_KEY_STORE_URL || undefined,
      kmsStatusIntervalSeconds: env.PLINTH_KMS_STATUS_INTERVAL_SECONDS,
    },
  };
}
