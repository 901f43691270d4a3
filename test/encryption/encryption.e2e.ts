import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { AesGcmTransformer } from '@plinth/storage';
import { encryptionConfigHash } from '../../apps/api/src/encryption/encryption-config.parser.js';
import { eventually } from '../support/eventually.js';
import { kubectl, type KubectlResult, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { aesgcmConfig } from './rotation-support.js';

function ok(r: KubectlResult): string {
  assert.equal(r.code, 0, `kubectl failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

const KEY1 = randomBytes(32).toString('base64');
const KEY2 = randomBytes(32).toString('base64');


const secret = (ns: string, name: string, value: string, tier: string) => `apiVersion: v1
kind: Secret
metadata:
  name: ${name}
  namespace: ${ns}
  labels:
    tier: ${tier}
stringData:
  password: ${value}
`;

const PLAIN = 'pl41ntext-P4ssw0rd';
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('encryption at rest with PLINTH_ENCRYPTION_PROVIDER_CONFIG (aesgcm for secrets)', () => {
  let s: TestServer;
  let kc: string;
  let admin: pg.Client;
  let file: string;
  const k = (args: string[], input?: string) => kubectl(kc, args, input);

  /** Every stored form of one Secret: its object row and every copy the change log keeps. */
  async function storedForms(ns: string, name: string): Promise<{ row: string; encrypted: string; history: string[] }> {
    const { rows } = await admin.query<{ body: string; enc: string }>(`SELECT body::text AS body, body ->> 'k8s:enc' AS enc FROM objects WHERE resource = 'secrets' AND namespace = $1 AND name = $2`, [ns, name]);
    const changes = await admin.query<{ o: string | null; p: string | null }>(`SELECT object::text AS o, prev_object::text AS p FROM changes WHERE resource = 'secrets' AND namespace = $1 AND name = $2`, [ns, name]);
    return { row: rows[0].body, encrypted: rows[0].enc, history: changes.rows.flatMap((r) => [r.o, r.p]).filter((x): x is string => x !== null) };
  }

  before(async () => {
    file = path.join(mkdtempSync(path.join(tmpdir(), 'plinth-enc-')), 'encryption.yaml');
    writeFileSync(file, aesgcmConfig([['key1', KEY1]]));
    s = await startTestServer('encryption', {
      PLINTH_ENCRYPTION_PROVIDER_CONFIG: file,
      PLINTH_ENCRYPTION_PROVIDER_CONFIG_AUTOMATIC_RELOAD: 'true',
      PLINTH_ENCRYPTION_PROVIDER_CONFIG_RELOAD_INTERVAL_SECONDS: '1',
    });
    kc = writeTestKubeconfig(s.url);
    admin = new pg.Client({ connectionString: s.database.url });
    await admin.connect();
    ok(await k(['create', 'namespace', 'enc']));
    ok(await k(['create', 'namespace', 'enc2']));
    ok(await k(['create', 'namespace', 'probe']));
  });
  after(async () => {
    await admin?.end();
    await s?.close();
  });

  it('a Secret created with kubectl reads back in plain, and its row and history hold upstream\'s prefix and no plaintext', async () => {
    ok(await k(['create', 'secret', 'generic', 'db', '-n', 'enc', `--from-literal=password=${PLAIN}`]));
    ok(await k(['label', 'secret', 'db', '-n', 'enc', 'tier=a']));
    assert.equal(ok(await k(['get', 'secret', 'db', '-n', 'enc', '-o', 'jsonpath={.data.password}'])), b64(PLAIN));
    const stored = await storedForms('enc', 'db');
    assert.match(stored.encrypted, /^k8s:enc:aesgcm:v1:key1:/);
    assert.ok(stored.row.startsWith('{"k8s:enc": "k8s:enc:aesgcm:v1:key1:'), stored.row);
    assert.ok(stored.history.length >= 1, 'the label change keeps the previous state in the change log');
    for (const text of [stored.row, ...stored.history]) {
      assert.equal(text.includes(PLAIN), false);
      assert.equal(text.includes(b64(PLAIN)), false);
      assert.equal(text.includes('last-applied'), false);
    }
    // Configmaps are not named by the configuration: stored as they are.
    ok(await k(['create', 'configmap', 'plain', '-n', 'enc', '--from-literal=k=visible-value']));
    const cm = await admin.query<{ body: string }>(`SELECT body::text AS body FROM objects WHERE resource = 'configmaps' AND namespace = 'enc' AND name = 'plain'`);
    assert.ok(cm.rows[0].body.includes('visible-value'));
  });

  it('re-reads of a Secret are answered from the plaintext cache (counted in /metrics), and an update is read anew', async () => {
    const hits = async () => Number(/^plinth_encryption_read_cache_hits_total (\d+)$/m.exec(ok(await k(['get', '--raw', '/metrics'])))?.[1] ?? Number.NaN);
    const password = async () => Buffer.from(ok(await k(['get', 'secret', 'cached', '-n', 'enc', '-o', 'jsonpath={.data.password}'])), 'base64').toString();
    ok(await k(['create', 'secret', 'generic', 'cached', '-n', 'enc', '--from-literal=password=first-value']));
    const before = await hits();
    for (let i = 0; i < 3; i++) assert.equal(await password(), 'first-value');
    assert.ok((await hits()) >= before + 3, 'three gets, three hits');
    ok(await k(['patch', 'secret', 'cached', '-n', 'enc', '-p', JSON.stringify({ stringData: { password: 'second-value' } })]));
    assert.equal(await password(), 'second-value');
    ok(await k(['delete', 'secret', 'cached', '-n', 'enc']));
  });

  it('label selectors, field selectors and server-side type filters still select encrypted Secrets', async () => {
    ok(await k(['apply', '-f', '-'], secret('enc', 'other', 'x-value', 'b')));
    assert.equal(ok(await k(['get', 'secrets', '-n', 'enc', '-l', 'tier=a', '-o', 'name'])).trim(), 'secret/db');
    assert.equal(ok(await k(['get', 'secrets', '-n', 'enc', '-l', 'tier!=a', '-o', 'name'])).trim(), 'secret/other');
    assert.equal(ok(await k(['get', 'secrets', '-n', 'enc', '--field-selector', 'type=Opaque,metadata.name=other', '-o', 'name'])).trim(), 'secret/other');
    const stored = await storedForms('enc', 'other');
    // kubectl apply's annotation holds the whole object: it is encrypted with the rest.
    assert.equal(stored.row.includes('x-value'), false);
    assert.equal(stored.row.includes(b64('x-value')), false);
  });

  it('watch events carry the decrypted object', async () => {
    const rv = JSON.parse(ok(await k(['get', 'secret', 'other', '-n', 'enc', '-o', 'json']))).metadata.resourceVersion;
    ok(await k(['patch', 'secret', 'other', '-n', 'enc', '-p', JSON.stringify({ stringData: { password: 'changed-value' } })]));
    const out = ok(await k(['get', '--raw', `/api/v1/namespaces/enc/secrets?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dother&timeoutSeconds=2`]));
    const events = out.trim().split('\n').map((l) => JSON.parse(l) as { type: string; object: { data?: Record<string, string> } });
    assert.equal(events[0].type, 'MODIFIED');
    assert.equal(events[0].object.data?.password, b64('changed-value'));
  });

  it('rotation: a new first key writes, the old key still reads', async () => {
    writeFileSync(file, aesgcmConfig([['key2', KEY2], ['key1', KEY1]]));
    await eventually(
      async () => {
        ok(await k(['apply', '-f', '-'], secret('probe', `probe-${Date.now()}`, 'p', 'c')));
        const { rows } = await admin.query<{ enc: string }>(`SELECT body ->> 'k8s:enc' AS enc FROM objects WHERE resource = 'secrets' AND namespace = 'probe' ORDER BY revision DESC LIMIT 1`);
        return rows[0].enc.startsWith('k8s:enc:aesgcm:v1:key2:');
      },
      { timeoutMs: 30_000, intervalMs: 500, message: 'the reloaded configuration writes with key2' },
    );
    ok(await k(['apply', '-f', '-'], secret('enc2', 'new', 'new-value', 'c')));
    ok(await k(['apply', '-f', '-'], secret('enc', 'fresh', 'fresh-value', 'z')));
    assert.match((await storedForms('enc2', 'new')).encrypted, /^k8s:enc:aesgcm:v1:key2:/);
    assert.equal(ok(await k(['get', 'secret', 'db', '-n', 'enc', '-o', 'jsonpath={.data.password}'])), b64(PLAIN));
    // Upstream's rotation step: rewriting an object unchanged stores it with the first key (it was read as stale).
    // The rotation job re-encrypts every Secret by itself (docs/encryption.md): once it is done, put one back under key1.
    await rotationDone(aesgcmConfig([['key2', KEY2], ['key1', KEY1]]));
    await backUnderKey1('enc', 'db');
    const before = await storedForms('enc', 'db');
    assert.match(before.encrypted, /^k8s:enc:aesgcm:v1:key1:/);
    ok(await k(['replace', '-f', '-'], ok(await k(['get', 'secret', 'db', '-n', 'enc', '-o', 'json']))));
    assert.match((await storedForms('enc', 'db')).encrypted, /^k8s:enc:aesgcm:v1:key2:/);
    assert.equal(ok(await k(['get', 'secret', 'db', '-n', 'enc', '-o', 'jsonpath={.data.password}'])), b64(PLAIN));
  });

  it('garbage collection and namespace deletion find encrypted Secrets (uid, ownerReferences and finalizers stay readable)', async () => {
    ok(await k(['create', 'namespace', 'gone']));
    ok(await k(['create', 'configmap', 'owner', '-n', 'gone']));
    const uid = ok(await k(['get', 'configmap', 'owner', '-n', 'gone', '-o', 'jsonpath={.metadata.uid}']));
    const owned = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'owned', namespace: 'gone', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid }] },
      stringData: { k: 'owned-value' },
    });
    ok(await k(['apply', '-f', '-'], owned));
    assert.match((await storedForms('gone', 'owned')).encrypted, /^k8s:enc:aesgcm:v1:/);
    ok(await k(['delete', 'configmap', 'owner', '-n', 'gone']));
    await eventually(async () => (await k(['get', 'secret', 'owned', '-n', 'gone'])).stderr.includes('NotFound'), { timeoutMs: 30_000, intervalMs: 200, message: 'the dependent Secret collected' });
    ok(await k(['apply', '-f', '-'], secret('gone', 'left', 'left-value', 'd')));
    ok(await k(['delete', 'namespace', 'gone', '--wait=false']));
    await eventually(async () => (await k(['get', 'namespace', 'gone'])).stderr.includes('NotFound'), { timeoutMs: 30_000, intervalMs: 200, message: 'the namespace emptied and removed' });
  });

  it('a bad file on reload keeps the configuration in force and counts the failure', async () => {
    writeFileSync(file, aesgcmConfig([['key3', Buffer.from('short').toString('base64')]]));
    await eventually(
      async () => /apiserver_encryption_config_controller_automatic_reloads_total\{status="failure",apiserver_id_hash="sha256:[0-9a-f]+"\} [1-9]/.test(ok(await k(['get', '--raw', '/metrics']))),
      { timeoutMs: 30_000, intervalMs: 500, message: 'a failed reload counted' },
    );
    ok(await k(['apply', '-f', '-'], secret('enc2', 'after-bad-reload', 'v', 'c')));
    assert.match((await storedForms('enc2', 'after-bad-reload')).encrypted, /^k8s:enc:aesgcm:v1:key2:/);
    assert.equal(ok(await k(['get', 'secret', 'other', '-n', 'enc', '-o', 'jsonpath={.data.password}'])), b64('changed-value'));
  });

  /** Waits until the rotation job has finished its pass to the configuration `content`. */
  async function rotationDone(content: string): Promise<void> {
    const hash = encryptionConfigHash(Buffer.from(content));
    await eventually(async () => (await admin.query(`SELECT 1 FROM encryption_rotation WHERE target = $1 AND phase = 'done'`, [hash])).rowCount === 1, {
      timeoutMs: 30_000,
      message: 'the rotation job is done',
    });
  }

  /**
   * Stores Secret `ns/name` under key1 again, in place, as it was before the
   * rotation job re-encrypted it with key2: a value whose key an operator
   * removes before the job has reached it.
   */
  async function backUnderKey1(ns: string, name: string): Promise<void> {
    const { rows } = await admin.query<{ tenant: string; enc: string }>(`SELECT tenant, body ->> 'k8s:enc' AS enc FROM objects WHERE resource = 'secrets' AND namespace = $1 AND name = $2`, [ns, name]);
    const prefix = 'k8s:enc:aesgcm:v1:key2:';
    assert.ok(rows[0].enc.startsWith(prefix), rows[0].enc);
    const aad = Buffer.from(`/${rows[0].tenant}/secrets/${ns}/${name}`);
    const plain = new AesGcmTransformer(Buffer.from(KEY2, 'base64')).fromStorage(Buffer.from(rows[0].enc.slice(prefix.length), 'base64'), aad).data;
    const enc = `k8s:enc:aesgcm:v1:key1:${new AesGcmTransformer(Buffer.from(KEY1, 'base64')).toStorage(plain, aad).toString('base64')}`;
    await admin.query(`UPDATE objects SET body = jsonb_set(body, '{k8s:enc}', to_jsonb($3::text)) WHERE resource = 'secrets' AND namespace = $1 AND name = $2`, [ns, name, enc]);
  }

  it('a removed key: that Secret answers upstream\'s InternalError, every other Secret is served', async () => {
    // The rotation job has re-encrypted every Secret with key2 (docs/encryption.md); put one back under key1.
    await rotationDone(aesgcmConfig([['key2', KEY2], ['key1', KEY1]]));
    await backUnderKey1('enc', 'other');
    writeFileSync(file, aesgcmConfig([['key2', KEY2]]));
    const failed = await eventually(
      async () => {
        const r = await k(['get', 'secret', 'other', '-n', 'enc', '-o', 'name']);
        return r.code !== 0 ? r : false;
      },
      { timeoutMs: 30_000, intervalMs: 500, message: 'the Secret written with key1 no longer reads' },
    );
    assert.match(failed.stderr, /Error from server \(InternalError\): Internal error occurred: no matching key was found for the provided AES transformer/);
    const raw = await k(['get', '--raw', '/api/v1/namespaces/enc/secrets/other']);
    assert.match(raw.stderr, /InternalError/);
    // A list that includes it fails as upstream's does, naming the key; lists and reads without it are served.
    assert.match((await k(['get', 'secrets', '-n', 'enc'])).stderr, /unable to transform key \\?"\/registry\/secrets\/enc\/other\\?": no matching key was found for the provided AES transformer/);
    assert.match(ok(await k(['get', 'secrets', '-n', 'enc2', '-o', 'name'])), /secret\/new/);
    // Rewritten with key2 during the rotation: still served.
    assert.equal(ok(await k(['get', 'secret', 'db', '-n', 'enc', '-o', 'jsonpath={.data.password}'])), b64(PLAIN));
    assert.equal(ok(await k(['get', 'secret', 'new', '-n', 'enc2', '-o', 'jsonpath={.data.password}'])), b64('new-value'));
    // Labels stay readable in the row, so a selector leaves the unreadable Secret out in SQL (upstream filters after decrypting, and fails).
    assert.equal(ok(await k(['get', 'secrets', '-n', 'enc', '-l', 'tier=z', '-o', 'jsonpath={.items[*].data.password}'])), b64('fresh-value'));
    assert.match(ok(await k(['get', 'configmaps', '-n', 'enc', '-o', 'name'])), /configmap\/plain/);
  });
});
