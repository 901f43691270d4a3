import { pino } from 'pino';
import { loadConfig } from '../../apps/api/src/config/app-config.js';
import { type RunningServer, startServer } from '../../apps/api/src/server.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

/** A Plinth server on its own database, for one test file. */
export interface TestServer extends RunningServer {
  database: TestDatabase;
  close(): Promise<void>;
}

/**
 * Starts a real Plinth server on a fresh database on a free loopback port.
 * `env` adds configuration (e.g. PLINTH_TENANTS). Logs go nowhere unless
 * PLINTH_TEST_LOG is set.
 */
export async function startTestServer(label: string, env: Record<string, string> = {}): Promise<TestServer> {
  const database = await createTestDatabase(label);
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: database.url, PLINTH_DB_POOL_SIZE: '10', ...env });
  const logger = pino({ level: process.env.PLINTH_TEST_LOG ?? 'silent' });
  const server = await startServer(config, logger);
  return {
    ...server,
    database,
    close: async () => {
      await server.stop();
      await database.drop();
    },
  };
}
