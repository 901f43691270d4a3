import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
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
const UNSAFE = '/api/v1/namespaces/u/secrets/broken?ignoreStoreReadErrorWithClusterBreakingPotential=true';

describe('deleting what cannot be read (KEP-3926, AllowUnsafeMalformedObjectDeletion=true)', () => {
  let s: TestServer;
  let kc: string;
  let file: string;
  const k = (args: string[], input?: string) => kubectl(kc, args, input);
  const asAlice = (args: string[], input?: string) => kubectl(kc, [...args, '--as', 'alice'], input);

  before(async () => {
    file = path.join(mkdtempSync(path.join(tmpdir(), 'plinth-unsafe-')), 'encryption.yaml');
    writeFileSync(file, aesgcmConfig([['key1', KEY1]], false));
    s = await startTestServer('unsafe-delete', {
      PLINTH_ENCRYPTION_PROVIDER_CONFIG: file,
      PLINTH_ENCRYPTION_PROVIDER_CONFIG_AUTOMATIC_RELOAD: 'true',
      PLINTH_ENCRYPTION_PROVIDER_CONFIG_RELOAD_INTERVAL_SECONDS: '1',
      PLINTH_FEATURE_GATES: 'AllowUnsafeMalformedObjectDeletion=true',
    });
    kc = writeTestKubeconfig(s.url);
    ok(await k(['create', 'namespace', 'u']));
    ok(await k(['create', 'role', 'deleter', '-n', 'u', '--verb=get,list,delete', '--resource=secrets']));
    ok(await k(['create', 'rolebinding', 'deleter', '-n', 'u', '--role=deleter', '--user=alice']));
  });
  after(async () => {
    await s?.close();
  });

  it('a Secret whose key is removed: get and list answer upstream\'s errors, only an authorized unsafe delete removes it', async () => {
    ok(await k(['create', 'secret', 'generic', 'broken', '-n', 'u', '--from-literal=password=x']));
    ok(await k(['create', 'secret', 'generic', 'broken2', '-n', 'u', '--from-literal=password=y']));
    ok(await k(['patch', 'secret', 'broken', '-n', 'u', '-p', '{"metadata":{"finalizers":["example.com/hold"]}}']));
    writeFileSync(file, aesgcmConfig([['key2', KEY2]], false));
    const failed = await eventually(
      async () => {
        const r = await k(['get', '--raw', '/api/v1/namespaces/u/secrets/broken']);
        return r.code !== 0 ? r : false;
      },
      { timeoutMs: 30_000, intervalMs: 500, message: 'the Secret written with key1 no longer reads' },
    );
    assert.match(failed.stderr, /Internal error occurred: StorageError: corrupt object, Code: 7, Key: \/registry\/secrets\/u\/broken, ResourceVersion: 0, AdditionalErrorMsg: data from the storage is not transformable revision=0: no matching key was found for the provided AES transformer/);

    // A list names every unreadable object (upstream's StorageReadError, one cause per key): paginated, as kubectl
    // asks, and unpaginated (streamed otherwise, read whole while unreadable objects are reported).
    for (const p of ['/api/v1/namespaces/u/secrets?limit=500', '/api/v1/namespaces/u/secrets']) {
      const list = await fetchStatus('GET', p);
      assert.equal(list.code, 500, p);
      assert.equal(list.reason, 'StorageReadError', p);
      assert.equal(list.message, 'failed to read one or more secrets from the storage');
      const fields = (list.details?.causes ?? []).map((c) => c.field).sort();
      assert.deepEqual(fields, ['/registry/secrets/u/broken', '/registry/secrets/u/broken2'], p);
      assert.ok(list.details!.causes!.every((c) => c.reason === 'UnexpectedServerResponse'));
    }

    // A plain delete reads the object first: the same InternalError.
    assert.match((await asAlice(['delete', 'secret', 'broken', '-n', 'u'])).stderr, /InternalError.*StorageError: corrupt object/);
    // The option is refused with dryRun, as upstream validates it.
    const dry = await fetchStatus('DELETE', `${UNSAFE}&dryRun=All`);
    assert.equal(dry.code, 422);
    assert.match(dry.message, /ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with \.dryRun/);
    // Without the verb: 403 with upstream's message.
    const denied = await asAlice(['delete', '--raw', UNSAFE]);
    assert.match(denied.stderr, /secrets "broken" is forbidden: not permitted to do "unsafe-delete-ignore-read-errors"/);
    assert.notEqual((await k(['get', '--raw', '/api/v1/namespaces/u/secrets/broken'])).code, 0, 'still there, still unreadable');

    // With it: removed, finalizer and all; a watcher is told (its watch ends with upstream's StorageReadError).
    ok(await k(['create', 'role', 'unsafe', '-n', 'u', '--verb=unsafe-delete-ignore-read-errors', '--resource=secrets']));
    ok(await k(['create', 'rolebinding', 'unsafe', '-n', 'u', '--role=unsafe', '--user=alice']));
    const from = ok(await k(['create', 'configmap', 'mark', '-n', 'u', '-o', 'jsonpath={.metadata.resourceVersion}']));
    const watching = k(['get', '--raw', `/api/v1/namespaces/u/secrets?watch=1&resourceVersion=${from}&timeoutSeconds=30`]);
    const body = JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', ignoreStoreReadErrorWithClusterBreakingPotential: true });
    ok(await eventually(async () => {
      const r = await asAlice(['delete', '--raw', '/api/v1/namespaces/u/secrets/broken', '-f', '-'], body);
      return r.code === 0 ? r : false;
    }, { timeoutMs: 10_000, intervalMs: 300, message: 'the unsafe delete is allowed once the verb is granted' }));
    assert.match((await k(['get', 'secret', 'broken', '-n', 'u'])).stderr, /NotFound/);
    const watched = (await watching).stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; object: { reason?: string; code?: number; message?: string } });
    assert.equal(watched.length, 1, JSON.stringify(watched));
    assert.equal(watched[0].type, 'ERROR');
    assert.deepEqual([watched[0].object.code, watched[0].object.reason], [500, 'StorageReadError']);
    assert.equal(
      watched[0].object.message,
      'saw a DELETED event, but object data is corrupt - data from the storage is not transformable revision=0: no matching key was found for the provided AES transformer',
    );
    ok(await asAlice(['delete', '--raw', '/api/v1/namespaces/u/secrets/broken2?ignoreStoreReadErrorWithClusterBreakingPotential=true']));
    // Afterwards the list is served again.
    ok(await k(['create', 'secret', 'generic', 'fresh', '-n', 'u', '--from-literal=password=z']));
    assert.equal(ok(await k(['get', 'secrets', '-n', 'u', '-o', 'jsonpath={.items[*].metadata.name}'])).trim(), 'fresh');
  });

  /** The Status of a request made with the admin's kubeconfig credentials (through kubectl --raw is not enough to read its details). */
  async function fetchStatus(method: string, p: string): Promise<{ code: number; reason: string; message: string; details?: { causes?: Array<{ reason?: string; field?: string }> } }> {
    const r = method === 'GET' ? await k(['get', '--raw', p, '-v=8']) : await k(['delete', '--raw', p, '-v=8']);
    const m = /^\s*(\{"kind":"Status".*\})\s*$/m.exec(r.stderr);
    assert.ok(m, r.stderr);
    return JSON.parse(m[1]);
  }
});
