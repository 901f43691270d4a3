import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { encryptionConfigHash } from '../../apps/api/src/encryption/encryption-config.parser.js';
import { eventually } from '../support/eventually.js';
import { query } from '../shards/support/shards.js';

export { query };

export const KEY1 = randomBytes(32).toString('base64');
export const KEY2 = randomBytes(32).toString('base64');
export const SHARDS = '/apis/tenancy.plinth.dev/v1beta1/shards';
export const b64 = (s: string) => Buffer.from(s).toString('base64');

/** An EncryptionConfiguration for secrets with these aesgcm keys in order, then identity when `identity` (reads what was stored in plain). */
export function aesgcmConfig(keys: Array<[string, string]>, identity = true): string {
  return `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - aesgcm:
          keys:
${keys.map(([name, secret]) => `            - name: ${name}\n              secret: ${secret}`).join('\n')}
${identity ? '      - identity: {}\n' : ''}`;
}

/** A configuration file in a fresh folder, with its writer and the hash the server reports for each content. */
export function configFile(initial: string): { file: string; write(content: string): string } {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'plinth-rot-')), 'encryption.yaml');
  const write = (content: string) => {
    writeFileSync(file, content);
    return encryptionConfigHash(Buffer.from(content));
  };
  write(initial);
  return { file, write };
}


/**
 * Every stored Secret value (object rows, and each non-null `object` and
 * `prev_object` of the change log) not written with `prefix`: read from
 * PostgreSQL directly. Empty when every one is.
 */
export async function secretValuesNotUnder(url: string, prefix: string): Promise<string[]> {
  const rows = await query<{ where: string; enc: string | null }>(
    url,
    `SELECT 'objects ' || namespace || '/' || name AS where, body ->> 'k8s:enc' AS enc FROM objects WHERE resource = 'secrets'
     UNION ALL SELECT 'changes ' || revision || ' object', object ->> 'k8s:enc' FROM changes WHERE resource = 'secrets' AND object IS NOT NULL
     UNION ALL SELECT 'changes ' || revision || ' prev_object', prev_object ->> 'k8s:enc' FROM changes WHERE resource = 'secrets' AND prev_object IS NOT NULL`,
  );
  return rows.filter((r) => !(r.enc ?? '').startsWith(prefix)).map((r) => `${r.where}: ${(r.enc ?? 'plain').slice(0, 40)}`);
}

/** Both tables as text, as a data-only dump would write them. */
export async function dumpTables(url: string): Promise<string> {
  const rows = await query<{ t: string }>(url, `SELECT (SELECT coalesce(string_agg(o::text, E'\\n'), '') FROM objects o) || E'\\n' || (SELECT coalesce(string_agg(c::text, E'\\n'), '') FROM changes c) AS t`);
  return rows[0].t;
}

/** The saved state of the rotation on the database at `url` (migration 0017), or undefined. */
export async function rotationState(
  url: string,
): Promise<{ target: string; requested: string | null; phase: string; checked: number; rewritten: number; failed: number; started_at: Date } | undefined> {
  const rows = await query<{ target: string; requested: string | null; phase: string; checked: string; rewritten: string; failed: string; started_at: Date }>(url, 'SELECT * FROM encryption_rotation WHERE id = 1');
  const r = rows[0];
  return r && { ...r, checked: Number(r.checked), rewritten: Number(r.rewritten), failed: Number(r.failed) };
}

/** The condition EncryptionRotated of Shard `default`, as a client reads it. */
export async function rotationCondition(url: string): Promise<{ status: string; reason: string; message: string } | undefined> {
  const res = await request(url).get(`${SHARDS}/default`);
  if (res.status !== 200) return undefined;
  return (res.body.status?.conditions as Array<{ type: string; status: string; reason: string; message: string }> | undefined)?.find((c) => c.type === 'EncryptionRotated');
}

/** Waits until the rotation to `hash` is done on the database and reported True on Shard `default`. */
export async function waitRotated(serverUrl: string, dbUrl: string, hash: string, timeoutMs = 120_000): Promise<void> {
  await eventually(
    async () => {
      const state = await rotationState(dbUrl);
      const c = await rotationCondition(serverUrl);
      return state?.target === hash && state.phase === 'done' && c?.status === 'True' && c.reason === 'Rotated' && c.message.includes(hash);
    },
    { timeoutMs, intervalMs: 200, message: `the rotation to ${hash} is done and reported` },
  );
}

/** Sum of the samples of `metric` (with `labelFilter` in their labels) in the server's /metrics. */
export async function metricSum(url: string, metric: string, labelFilter = ''): Promise<number> {
  const res = await request(url).get('/metrics').expect(200);
  let sum = 0;
  for (const line of res.text.split('\n')) {
    if (!line.startsWith(`${metric}{`) || !line.includes(labelFilter)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** Creates `n` Secrets `<prefix>-<i>` in `namespace` with value `<prefix>-<i>-v0`, eight at a time; each must be answered 201. */
export async function createSecrets(url: string, namespace: string, prefix: string, n: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < n; i = next++) {
        await request(url)
          .post(`/api/v1/namespaces/${namespace}/secrets`)
          .send({ metadata: { name: `${prefix}-${i}` }, data: { v: b64(`${prefix}-${i}-v0`) } })
          .expect(201);
      }
    }),
  );
}
