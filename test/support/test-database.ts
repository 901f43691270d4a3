import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** A database cloned from the migrated template for one test file. */
export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

function adminUrl(): string {
  const url = process.env.PLINTH_TEST_PG_ADMIN_URL;
  if (!url) throw new Error('PLINTH_TEST_PG_ADMIN_URL is not set: run the tests with `npm test`');
  return url;
}

/** Creates a fresh database from the migrated template (CREATE DATABASE … TEMPLATE). */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = `t_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase().slice(0, 30)}_${randomBytes(4).toString('hex')}`;
  const template = process.env.PLINTH_TEST_PG_TEMPLATE ?? 'plinth_template';
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    // A template may not have other sessions while it is copied; retry briefly when files start together.
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
        break;
      } catch (err) {
        if (attempt > 50) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await client.end();
  }
  const u = new URL(adminUrl());
  u.pathname = `/${name}`;
  const url = u.toString();
  return {
    url,
    name,
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl() });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
