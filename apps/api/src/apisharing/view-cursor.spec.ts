import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '@plinth/apimachinery';
import { decodeViewContinue, encodeCursor, encodeViewContinue, parseCursor, requireCursor, tenantsDigest, type ViewCursor } from './view-cursor.js';

const status = (fn: () => unknown): number => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError, String(err));
    return err.code;
  }
  return 0;
};

describe('view cursor (the resourceVersion of the provider\'s view across shards)', () => {
  const cursor: ViewCursor = { shards: new Map([['default', 120], ['b', 7]]), tenants: tenantsDigest(['c2', 'c1']) };

  it('round-trips a vector, with and without an object\'s own revision, in one canonical encoding', () => {
    const rv = encodeCursor(cursor);
    assert.match(rv, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(parseCursor(rv), cursor);
    // Shards are in name order whatever the map's order: equal vectors have equal strings (compare only for equality).
    assert.equal(encodeCursor({ ...cursor, shards: new Map([['b', 7], ['default', 120]]) }), rv);
    const withObject = { ...cursor, object: { shard: 'b', revision: 7 } };
    assert.deepEqual(parseCursor(encodeCursor(withObject)), withObject);
    assert.notEqual(encodeCursor(withObject), rv);
    const empty: ViewCursor = { shards: new Map(), tenants: tenantsDigest([]) };
    assert.deepEqual(parseCursor(encodeCursor(empty)), empty);
  });

  it('digests a set of tenants whatever their order, and tells sets apart', () => {
    assert.equal(tenantsDigest(['a', 'b']), tenantsDigest(['b', 'a']));
    assert.notEqual(tenantsDigest(['a', 'b']), tenantsDigest(['a']));
    assert.match(tenantsDigest(['a']), /^[0-9a-f]{12}$/);
  });

  it('refuses what it did not make: bad base64, other versions, bad shard names or revisions, duplicates, non-canonical forms', () => {
    const enc = (text: string) => Buffer.from(text).toString('base64url');
    const d = tenantsDigest(['x']);
    for (const bad of [
      '',
      'not base64!',
      enc(`v2|${d}|b=1`),
      enc(`v1|nothex|b=1`),
      enc(`v1|${d}|B=1`),
      enc(`v1|${d}|b=-1`),
      enc(`v1|${d}|b=01`),
      enc(`v1|${d}|b=1e3`),
      enc(`v1|${d}|b=99999999999999999`),
      enc(`v1|${d}|b=1,b=2`),
      enc(`v1|${d}|default=1,b=2`), // not in name order: not canonical
      enc(`v1|${d}|b=1|`),
      enc(`v1|${d}|b=1|b=2|x`),
      enc(`v1|${d}|b=1`) + '=',
      'x'.repeat(9000),
    ]) {
      assert.equal(parseCursor(bad), undefined, bad);
    }
    assert.ok(parseCursor(enc(`v1|${d}|b=1,default=2`)));
  });

  it('answers a malformed resourceVersion 400 and a plain revision (one shard\'s, not a cursor) 410 Expired', () => {
    assert.equal(status(() => requireCursor('garbage!')), 400);
    assert.equal(status(() => requireCursor(Buffer.from('v1|zz|b=1').toString('base64url'))), 400);
    assert.equal(status(() => requireCursor('12345')), 410);
    assert.equal(status(() => requireCursor(encodeCursor(cursor))), 0);
  });

  it('encodes continue tokens that carry the snapshot, the tenant and the key, and refuses foreign ones with 400', () => {
    const rv = encodeCursor(cursor);
    const t = decodeViewContinue(encodeViewContinue(rv, 'c2', { namespace: 'default', name: 'w/1' }));
    assert.equal(t.rv, rv);
    assert.deepEqual(t.cursor, cursor);
    assert.equal(t.tenant, 'c2');
    assert.deepEqual(t.after, { namespace: 'default', name: 'w/1' });
    assert.equal(decodeViewContinue(encodeViewContinue(rv, 'c3')).after, undefined);
    const json = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    for (const bad of [
      'garbage',
      json({ v: 'meta.k8s.io/v1', rv: 5, start: 'a/b' }),
      json({ v: 'apiexport-view/v1', rv: 'nope', tenant: 'c1', start: '' }),
      json({ v: 'apiexport-view/v1', rv, tenant: 'Bad Tenant', start: '' }),
      json({ v: 'apiexport-view/v1', rv, tenant: 'c1', start: 'no-slash' }),
      json({ v: 'apiexport-view/v1', rv: encodeCursor({ ...cursor, object: { shard: 'b', revision: 1 } }), tenant: 'c1', start: '' }),
      json(null),
    ]) {
      assert.equal(status(() => decodeViewContinue(bad)), 400, bad);
    }
  });
});
