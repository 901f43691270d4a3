import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import {
  AesGcmTransformer,
  createDatabase,
  EncryptionRotationRepository,
  IDENTITY,
  installResourceTransformers,
  migrateToLatest,
  ObjectStoreRepository,
  PrefixTransformers,
} from '@plinth/storage';
import { progress, runBenchmark, startBenchPostgres } from './bench-support.js';
import { migrations } from '../migrations/index.js';

/** Secrets stored under the old key (BENCH_ROTATION_OBJECTS, default 20,000); each is updated once, so the change log holds as many old copies. */
const OBJECTS = Number(process.env.BENCH_ROTATION_OBJECTS ?? 20_000);
const BATCH = 500;
const VALUE = 'x'.repeat(700);

/** Secrets encrypted by aesgcm with these keys, the first writing (as an EncryptionConfiguration with one aesgcm entry, then identity). */
function install(keys: Array<[string, Buffer]>): () => void {
  const aes = new PrefixTransformers(
    'no matching key was found for the provided AES transformer',
    keys.map(([name, secret]) => ({ prefix: Buffer.from(`${name}:`), transformer: new AesGcmTransformer(secret) })),
  );
  const transformer = new PrefixTransformers('no matching prefix found', [
    { prefix: Buffer.from('k8s:enc:aesgcm:v1:'), transformer: aes },
    { prefix: Buffer.alloc(0), transformer: IDENTITY },
  ]);
  return installResourceTransformers({ forResource: (r) => (r === 'secrets' ? { transformer, encrypts: true } : undefined) });
}

/**
 * The rotation job's storage throughput: OBJECTS Secrets, each created and
 * updated once under key1 (so the change log holds 2 × OBJECTS rows),
 * then key2 made first and the rotation's batches run to the end, as the
 * job runs them on one shard (no rate limit), on a durable PostgreSQL.
 * Prints rows and objects re-encrypted per second.
 */
async function main(): Promise<void> {
  const pg = await startBenchPostgres('rotation', 55_000 + Math.floor(Math.random() * 5000));
  const db = createDatabase({ connectionString: pg.url, maxConnections: 20 });
  try {
    await migrateToLatest(db, migrations);
    const key1 = randomBytes(32);
    const key2 = randomBytes(32);
    let restore = install([['key1', key1]]);
    const objects = new ObjectStoreRepository(db);
    progress(`writing ${OBJECTS} Secrets under key1 (created, then updated once)`);
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let i = next++; i < OBJECTS; i = next++) {
          const key = { tenant: 'default', resource: 'secrets', namespace: `ns-${i % 50}`, name: `s-${i}` };
          const body = (v: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: key.name, namespace: key.namespace }, data: { v: Buffer.from(v).toString('base64') } });
          const created = await objects.create(key, body(`${VALUE}-a`));
          await objects.update(key, body(`${VALUE}-b`), created.revision);
        }
      }),
    );
    restore();
    restore = install([['key2', key2], ['key1', key1]]);
    const repo = new EncryptionRotationRepository();
    const load = loadavg()[0].toFixed(2);
    const t0 = process.hrtime.bigint();
    let objectRows = 0;
    let rewritten = 0;
    let cursor;
    for (;;) {
      const b = await repo.rotateObjects(db, cursor, BATCH);
      objectRows += b.checked;
      rewritten += b.rewritten;
      cursor = b.last;
      if (b.checked < BATCH) break;
    }
    const tObjects = Number(process.hrtime.bigint() - t0) / 1e9;
    let changeRows = 0;
    let changeCursor;
    for (;;) {
      const b = await repo.rotateChanges(db, changeCursor, BATCH);
      changeRows += b.checked;
      rewritten += b.rewritten;
      changeCursor = b.last;
      if (b.checked < BATCH) break;
    }
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    restore();
    console.log(`rotation of ${OBJECTS} Secrets (load ${load} at start): ${objectRows} object rows in ${tObjects.toFixed(1)} s = ${(objectRows / tObjects).toFixed(0)} objects/s; ` +
      `${changeRows} change rows in ${(seconds - tObjects).toFixed(1)} s = ${(changeRows / (seconds - tObjects)).toFixed(0)} rows/s; ` +
      `${rewritten} values rewritten, ${((objectRows + changeRows) / seconds).toFixed(0)} rows/s overall`);
  } finally {
    await db.destroy();
    await pg.stop();
  }
}

runBenchmark(main);
