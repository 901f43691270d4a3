import { pino } from 'pino';
import { loadConfig } from '../../apps/api/src/config/app-config.js';
import { type RunningServer, startServer } from '../../apps/api/src/app/server.js';
import { installDefaultCredentials, sharedTestDataDir } from './credentials.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

/** A Plinth server on its own database, for one test file. */
export interface TestServer extends RunningServer {
  database: TestDatabase;
  close(): Promise<void>;
}

/**
 * Starts a real Plinth server on a fresh database on a free loopback port,
 * serving HTTPS with the PKI of this test file's shared data folder, and
 * makes the platform administrator (its client certificate, its CA) the
 * default identity of supertest, `fetch`, kubectl and client-node helpers
 * (see credentials.ts for other identities). `env` adds configuration
 * (e.g. PLINTH_TENANTS). Logs go nowhere unless PLINTH_TEST_LOG is set.
 */
export async function startTestServer(label: string, env: Record<string, string> = {}): Promise<TestServer> {
  const database = await createTestDatabase(label);
  const server = await startTestServerOn(database, env);
  return {
    ...server,
    close: async () => {
      await server.close();
      await database.drop();
    },
  };
}

/**
 * Starts a server as {@link startTestServer} does, on an existing test
 * database (to restart with other settings over the same data); its
 * `close()` stops the server and leaves the database to its owner.
 */
export async function startTestServerOn(database: TestDatabase, env: Record<string, string> = {}): Promise<TestServer> {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    PLINTH_DB_POOL_SIZE: '10',
    PLINTH_DATA_DIR: sharedTestDataDir(),
    ...env,
  });
  const logger = pino({ level: process.env.PLINTH_TEST_LOG ?? 'silent' });
  const server = await startServer(config, logger);
  installDefaultCredentials(server.pki);
  return { ...server, database, close: () => server.stop() };
}
