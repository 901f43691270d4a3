import { checkSessionPooling, SessionPoolingError } from '@plinth/storage';
import type { AppConfig } from '../config/app-config.js';
import { EXIT_CONFIGURATION, StartupFailure } from './startup-failure.js';

/** The sentence for a {@link SessionPoolingError} of the URL that `setting` names. */
function poolingFailure(err: SessionPoolingError, setting: string): StartupFailure {
  return new StartupFailure(
    `${setting} reaches ${err.message}; set pool_mode = session in the pooler (PgBouncer), or point ${setting} at PostgreSQL itself (docs/operations.md, PgBouncer)`,
    EXIT_CONFIGURATION,
  );
}

/**
 * Start-up's check that the platform database (`url`: DATABASE_URL or the
 * embedded one) and every shard of PLINTH_SHARDS keep session state across
 * transactions: a pooler in transaction or statement mode in front of any
 * of them stops start-up with a StartupFailure (exit 2) saying why. A shard
 * that cannot be reached now is left to the shard pool (it reports it not
 * ready and retries); the platform database's connection errors are thrown
 * as they are (describeStartupFailure names them).
 */
export async function checkSessionPoolingAtStartup(config: AppConfig, url: string): Promise<void> {
  const checks: Array<Promise<void>> = [
    checkSessionPooling(url).catch((err: unknown) => {
      throw err instanceof SessionPoolingError ? poolingFailure(err, 'DATABASE_URL') : err;
    }),
    ...config.shards.map((shard) =>
      checkSessionPooling(shard.url).catch((err: unknown) => {
        if (err instanceof SessionPoolingError) throw poolingFailure(err, `PLINTH_SHARDS (shard ${shard.name})`);
      }),
    ),
  ];
  const outcomes = await Promise.allSettled(checks);
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed) throw failed.reason;
}
