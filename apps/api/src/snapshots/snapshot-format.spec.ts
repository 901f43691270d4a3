import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateX25519Identity, identityToRecipient } from 'age-encryption';
import { parseSnapshot, type SnapshotHeader, type SnapshotRecord, SnapshotFormatError, SnapshotWriter } from './snapshot-format.js';
import { restoreOrder } from './snapshot-restore.js';
import { openSealed, RecipientError, secretSealer } from './snapshot-secrets.js';

const header = (sealedTo?: string[]): SnapshotHeader => ({
  format: 'tenancy.plinth.dev/tenant-snapshot',
  version: 1,
  tenant: { name: 'acme', uid: 't1', spec: { owners: [] } },
  revision: 42,
  createdAt: '2026-12-02T00:00:00Z',
  secrets: sealedTo ? { scheme: 'age-x25519', recipients: sealedTo } : { scheme: 'none' },
});

const cm = (name: string, uid: string, owners: string[] = []): SnapshotRecord => ({
  resource: 'configmaps',
  namespace: 'app',
  name,
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'app', uid, ownerReferences: owners.map((o) => ({ uid: o, name: o, kind: 'ConfigMap', apiVersion: 'v1' })) } },
});

function write(h: SnapshotHeader, records: SnapshotRecord[]): Buffer {
  const w = new SnapshotWriter();
  return Buffer.concat([w.header(h), ...records.map((r) => w.record(r)), w.trailer()]);
}

describe('snapshot format', () => {
  it('reads back what it wrote: header, records in order, trailer with count and SHA-256', () => {
    const bytes = write(header(), [cm('a', 'u1'), cm('b', 'u2')]);
    const parsed = parseSnapshot(bytes);
    assert.equal(parsed.header.revision, 42);
    assert.deepEqual(parsed.records.map((r) => r.name), ['a', 'b']);
    assert.equal(parsed.trailer.objects, 2);
    assert.match(parsed.trailer.sha256, /^[0-9a-f]{64}$/);
  });

  it('refuses truncated, damaged, padded and foreign input, naming the fault', () => {
    const bytes = write(header(), [cm('a', 'u1'), cm('b', 'u2')]);
    const fails = (b: Buffer, re: RegExp) => assert.throws(() => parseSnapshot(b), (e: unknown) => e instanceof SnapshotFormatError && re.test(e.message));
    fails(Buffer.alloc(0), /empty/);
    fails(bytes.subarray(0, bytes.length - 1), /truncated/);
    fails(bytes.subarray(0, bytes.lastIndexOf('{"end"')), /truncated: no trailer/);
    const flipped = Buffer.from(bytes);
    flipped[bytes.indexOf('"u2"') + 2] = 'X'.charCodeAt(0);
    fails(flipped, /SHA-256 does not match/);
    fails(Buffer.concat([bytes, Buffer.from('{}\n')]), /after the trailer/);
    fails(Buffer.from('{"hello":1}\n'), /not a tenant snapshot/);
    fails(write({ ...header(), version: 2 }, []), /version 2 is not supported/);
    fails(write(header(), [cm('a', 'u1'), cm('a', 'u1')]), /appears twice/);
    fails(write(header(), [{ ...cm('a', 'u1'), name: 'other' }]), /does not carry that name/);
  });

  it('seals Secrets to age recipients, opens them with an identity, and refuses a wrong one', async () => {
    const id = await generateX25519Identity();
    const other = await generateX25519Identity();
    const recipient = await identityToRecipient(id);
    const seal = secretSealer([recipient]);
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'app', uid: 'u9' }, data: { p: 'aHVudGVyMg==' } };
    const sealed: SnapshotRecord = { resource: 'secrets', namespace: 'app', name: 's', sealed: await seal(secret) };
    assert.ok(!sealed.sealed!.includes('aHVudGVyMg'));
    const parsed = parseSnapshot(write(header([recipient]), [sealed]));
    await assert.rejects(openSealed(parsed.header, structuredClone(parsed.records), [other]), /cannot open secrets app\/s/);
    await assert.rejects(openSealed(parsed.header, structuredClone(parsed.records), []), /give an identity/);
    const h = await openSealed(parsed.header, parsed.records, [id]);
    assert.deepEqual(h.secrets, { scheme: 'none' });
    assert.deepEqual(parsed.records[0].object, secret);
    assert.throws(() => secretSealer(['ssh-ed25519 AAAA']), RecipientError);
  });

  it('restores namespaces first, then CRDs, and owners before their dependents', () => {
    const ns: SnapshotRecord = { resource: 'namespaces', namespace: '', name: 'app', object: { metadata: { name: 'app', uid: 'n1' } } };
    const crd: SnapshotRecord = { resource: 'customresourcedefinitions.apiextensions.k8s.io', namespace: '', name: 'x.example.com', object: { metadata: { name: 'x.example.com', uid: 'c1' } } };
    const grandchild = cm('gc', 'u3', ['u2']);
    const child = cm('child', 'u2', ['u1']);
    const root = cm('root', 'u1');
    const cyclic = [cm('p', 'u7', ['u8']), cm('q', 'u8', ['u7'])];
    const order = restoreOrder([grandchild, child, ...cyclic, root, crd, ns]).map((r) => r.name);
    assert.deepEqual(order.slice(0, 2), ['app', 'x.example.com']);
    assert.ok(order.indexOf('root') < order.indexOf('child') && order.indexOf('child') < order.indexOf('gc'), order.join(','));
    assert.equal(order.length, 7);
  });
});
