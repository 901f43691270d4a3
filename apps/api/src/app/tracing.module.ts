import { readFileSync } from 'node:fs';
import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { exporterUrl, parseTracingConfiguration } from '../config/tracing-configuration.js';
import { LOGGER } from '../observability/logger.js';
import { TRACING, Tracing } from '../observability/tracing.js';
import { TenantDirectory } from '../sharding/tenant-directory.js';

/**
 * Reads PLINTH_TRACING_CONFIG_FILE and builds the server's {@link Tracing},
 * or null without the file (then nothing traces, and the hooks are not
 * installed). Throws (stopping start-up) naming the setting and the field
 * when the file is invalid; an unreadable file is reported by
 * startup-failure.ts.
 */
function createTracing(config: AppConfig, directory: TenantDirectory, logger: Logger): Tracing | null {
  const file = config.tracingConfigFile;
  if (!file) return null;
  const text = readFileSync(file, 'utf8');
  let parsed;
  try {
    parsed = parseTracingConfiguration(text);
  } catch (err) {
    throw new Error(`PLINTH_TRACING_CONFIG_FILE ${file}: ${(err as Error).message}`);
  }
  logger.info({ endpoint: parsed.endpoint, samplingRatePerMillion: parsed.samplingRatePerMillion }, 'tracing: spans exported over OTLP gRPC');
  return new Tracing({ url: exporterUrl(parsed.endpoint), samplingRatePerMillion: parsed.samplingRatePerMillion, shardOf: (t) => directory.peek(t) });
}

/**
 * OpenTelemetry tracing ({@link TRACING}: a Tracing, or null when
 * PLINTH_TRACING_CONFIG_FILE is unset): global, read by the request
 * pipeline, the storage, the admission chain and the watch fan-out. Spans
 * still buffered are exported when the server stops.
 */
@Global()
@Module({
  providers: [{ provide: TRACING, useFactory: createTracing, inject: [APP_CONFIG, TenantDirectory, LOGGER] }],
  exports: [TRACING],
})
export class TracingModule implements OnApplicationShutdown {
  constructor(@Inject(TRACING) private readonly tracing: Tracing | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.tracing?.shutdown();
  }
}
