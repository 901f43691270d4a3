import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TenantObject } from '../kinds/tenant/tenant-api.js';
import { judgeLeftover, moveAsked } from './tenant-leftover-sweep.js';

function tenant(uid: string, lives: string | undefined, wants?: string): TenantObject {
  return { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'acme', uid }, spec: wants ? { shard: wants } : {}, status: lives ? { shard: lives } : {} };
}
const row = (over: Partial<{ objectUid: string | null; phase: string; fenced: boolean }> = {}) => ({ name: 'acme', objectUid: 'u1', phase: 'Active', fenced: false, ...over });

describe('judgeLeftover', () => {
  it('keeps the rows where the tenant lives, and a move\'s copy where it is going', () => {
    assert.equal(judgeLeftover('b', row(), tenant('u1', 'b', 'b')), undefined);
    assert.equal(judgeLeftover('c', row({ fenced: true }), tenant('u1', 'b', 'c')), undefined);
    assert.equal(judgeLeftover('b', row({ fenced: true }), tenant('u1', 'b', 'c')), undefined, 'the source of a running move may be fenced');
    assert.equal(judgeLeftover('default', row(), tenant('u1', undefined)), undefined);
    assert.equal(judgeLeftover('b', { ...row(), name: 'default' }, undefined), undefined, 'the platform tenant');
  });

  it('removes rows of a tenant that lives elsewhere, of an earlier tenant of the name, and of no tenant', () => {
    assert.equal(judgeLeftover('c', row(), tenant('u1', 'b', 'b')), 'remove');
    assert.equal(judgeLeftover('b', row({ objectUid: 'u0' }), tenant('u1', 'b', 'b')), 'remove');
    assert.equal(judgeLeftover('c', row(), undefined), 'remove');
    assert.equal(judgeLeftover('default', row({ objectUid: null }), undefined), undefined, 'a row from before object uids: start-up gives it a Tenant');
    assert.equal(judgeLeftover('default', row({ phase: 'Terminating' }), undefined), undefined, 'the tenant controller finishes it');
    assert.equal(judgeLeftover('c', row({ phase: 'Terminating' }), undefined), 'remove');
  });

  it('unfences where the tenant lives when no move is asked for', () => {
    assert.equal(judgeLeftover('b', row({ fenced: true }), tenant('u1', 'b', 'b')), 'unfence');
    assert.equal(judgeLeftover('default', row({ fenced: true }), tenant('u1', undefined)), 'unfence');
  });

  it('moveAsked: spec.shard names another shard than status.shard', () => {
    assert.equal(moveAsked(tenant('u1', 'b', 'c')), true);
    assert.equal(moveAsked(tenant('u1', 'b', 'b')), false);
    assert.equal(moveAsked(tenant('u1', undefined)), false);
    assert.equal(moveAsked(tenant('u1', undefined, 'c')), true);
  });
});
