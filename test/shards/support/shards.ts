import pg from 'pg';
import request from 'supertest';
import { eventually } from '../../support/eventually.js';
import { TestPostgres } from '../../support/test-postgres.js';
import { startTestServer, startTestServerOn, type TestServer } from '../../support/test-server.js';

export const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
export const SHARDS = '/apis/tenancy.plinth.dev/v1beta1/shards';

interface Conditioned {
  status?: { conditions?: Array<{ type: string; status: string; reason: string; message: string }> };
}

/** The condition `type` of a Tenant or Shard object, or undefined. */
export function conditionOf(o: Conditioned, type: string) {
  return o.status?.conditions?.find((c) => c.type === type);
}

/** Waits until Shard `name` reports Ready=`status` and returns it. */
export function waitShardReady(url: string, name: string, status = 'True') {
  return eventually(
    async () => {
      const res = await request(url).get(`${SHARDS}/${name}`);
      return res.status === 200 && conditionOf(res.body, 'Ready')?.status === status ? res.body : false;
    },
    { message: `shard ${name} Ready=${status}`, timeoutMs: 60_000 },
  );
}

/** Registers `connection` as Shard `name` (a Secret `shard-<name>` in the platform's default namespace, then the Shard). */
export async function registerShard(url: string, name: string, connection: string): Promise<void> {
  await request(url).post('/api/v1/namespaces/default/secrets').send({ metadata: { name: `shard-${name}` }, data: { url: Buffer.from(connection).toString('base64') } }).expect(201);
  await request(url).post(SHARDS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Shard', metadata: { name }, spec: { secretRef: { name: `shard-${name}`, namespace: 'default' } } }).expect(201);
}

/** Runs one query on the database at `url` (a shard's, read directly to check where rows are). */
export async function query<T>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text, params)).rows as T[];
  } finally {
    await c.end();
  }
}

/** Creates `n` objects by POSTing `body(i)` to `path`, eight at a time; each must be answered 201. */
export async function createMany(url: string, path: string, n: number, body: (i: number) => object): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < n; i = next++) await request(url).post(path).send(body(i)).expect(201);
    }),
  );
}

/** Two replicas in cluster mode over the platform's database, and two more PostgreSQL servers registered as shards `b` and `c`. */
export interface ShardedSetup {
  s: TestServer;
  second: TestServer;
  b: TestPostgres;
  c: TestPostgres;
  close(): Promise<void>;
}

/**
 * Starts what the shard suites run on: PostgreSQL servers `b` and `c` of
 * their own (killable), two replicas in cluster mode (Redis required), and
 * the two registered as Shards, ready. `label` names the databases.
 */
export async function startShardedReplicas(label: string): Promise<ShardedSetup> {
  const [b, c] = await Promise.all([TestPostgres.start(`${label}_b`), TestPostgres.start(`${label}_c`)]);
  const redis = process.env.PLINTH_TEST_REDIS_URL;
  if (!redis) throw new Error('the shard suites run two replicas in cluster mode: redis-server must be installed');
  const s = await startTestServer(label, { REDIS_URL: redis });
  const second = await startTestServerOn(s.database, { REDIS_URL: redis });
  await registerShard(s.url, 'b', b.url);
  await registerShard(s.url, 'c', c.url);
  await Promise.all([waitShardReady(s.url, 'b'), waitShardReady(s.url, 'c'), waitShardReady(s.url, 'default')]);
  return {
    s,
    second,
    b,
    c,
    close: async () => {
      await second.close();
      await s.close();
      await b.close();
      await c.close();
    },
  };
}
