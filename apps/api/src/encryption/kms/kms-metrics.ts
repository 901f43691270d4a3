import { createHash } from 'node:crypto';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** `sha256:<hex>` of a key_id, as upstream's metrics label it (the key_id itself is not exported). */
export function keyIdHash(keyId: string): string {
  return keyId === '' ? '' : `sha256:${createHash('sha256').update(keyId).digest('hex')}`;
}

/**
 * Upstream's `apiserver_envelope_encryption_*` metrics of KMS v2
 * (k8s.io/apiserver/pkg/storage/value/encrypt/envelope/metrics), and the
 * value package's cache-miss counter. One set per registry, shared by
 * every provider of every configuration loaded.
 */
export class KmsMetrics {
  readonly keyIdHashTotal: Counter<'transformation_type' | 'provider_name' | 'key_id_hash' | 'apiserver_id_hash'>;
  readonly keyIdHashLast: Gauge<'transformation_type' | 'provider_name' | 'key_id_hash' | 'apiserver_id_hash'>;
  readonly keyIdHashStatusLast: Gauge<'provider_name' | 'key_id_hash' | 'apiserver_id_hash'>;
  readonly invalidKeyIdFromStatus: Counter<'provider_name' | 'error'>;
  readonly kmsLatency: Histogram<'provider_name' | 'method_name' | 'grpc_status_code'>;
  readonly dekSourceCacheSize: Gauge<'provider_name'>;
  readonly cacheMisses: Counter<string>;

  constructor(registry: Registry) {
    const registers = [registry];
    const ns = 'apiserver_envelope_encryption';
    this.keyIdHashTotal = new Counter({
      name: `${ns}_key_id_hash_total`,
      help: 'Number of times a keyID is used split by transformation type, provider, and apiserver identity.',
      labelNames: ['transformation_type', 'provider_name', 'key_id_hash', 'apiserver_id_hash'],
      registers,
    });
    this.keyIdHashLast = new Gauge({
      name: `${ns}_key_id_hash_last_timestamp_seconds`,
      help: 'The last time in seconds when a keyID was used.',
      labelNames: ['transformation_type', 'provider_name', 'key_id_hash', 'apiserver_id_hash'],
      registers,
    });
    this.keyIdHashStatusLast = new Gauge({
      name: `${ns}_key_id_hash_status_last_timestamp_seconds`,
      help: 'The last time in seconds when a keyID was returned by the Status RPC call.',
      labelNames: ['provider_name', 'key_id_hash', 'apiserver_id_hash'],
      registers,
    });
    this.invalidKeyIdFromStatus = new Counter({
      name: `${ns}_invalid_key_id_from_status_total`,
      help: 'Number of times an invalid keyID is returned by the Status RPC call split by error.',
      labelNames: ['provider_name', 'error'],
      registers,
    });
    this.kmsLatency = new Histogram({
      name: `${ns}_kms_operations_latency_seconds`,
      help: 'KMS operation duration with gRPC error code status total.',
      labelNames: ['provider_name', 'method_name', 'grpc_status_code'],
      buckets: [0.0001, 0.0002, 0.0004, 0.0008, 0.0016, 0.0032, 0.0064, 0.0128, 0.0256, 0.0512, 0.1024, 0.2048, 0.4096, 0.8192, 1.6384, 3.2768, 6.5536, 13.1072, 26.2144, 52.4288],
      registers,
    });
    this.dekSourceCacheSize = new Gauge({
      name: `${ns}_dek_source_cache_size`,
      help: 'Number of records in data encryption key (DEK) source cache. On a restart, this value is an approximation of the number of decrypt RPC calls the server will make to the KMS plugin.',
      labelNames: ['provider_name'],
      registers,
    });
    this.cacheMisses = new Counter({
      name: 'apiserver_storage_envelope_transformation_cache_misses_total',
      help: 'Total number of cache misses while accessing key decryption key(KEK).',
      registers,
    });
  }
}
