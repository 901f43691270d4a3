import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@plinth/apimachinery';
import { validateTenant } from './tenant.validation.js';
import { tenantResourceV1beta1 } from './tenant.resource.js';

function tenant(spec?: unknown, status?: unknown): KubeObject {
  return { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'acme', creationTimestamp: '2026-11-27T10:00:00Z' }, ...(spec === undefined ? {} : { spec }), ...(status ? { status } : {}) };
}

describe('validateTenant spec.shard', () => {
  it('accepts a shard name that is a DNS-1123 label, or none', () => {
    assert.deepEqual(validateTenant(tenant({ shard: 'east-1' })), []);
    assert.deepEqual(validateTenant(tenant({ shard: 'default' })), []);
    assert.deepEqual(validateTenant(tenant({ shard: '' })), []);
    assert.deepEqual(validateTenant(tenant({})), []);
  });

  it('refuses a shard that is not a DNS-1123 label', () => {
    for (const bad of ['East', 'a.b', 'a_b', '-a', 'x'.repeat(64)]) {
      const errs = validateTenant(tenant({ shard: bad }));
      assert.deepEqual(errs.map((e) => `${e.type} ${e.field}`), ['FieldValueInvalid spec.shard'], bad);
    }
    assert.deepEqual(validateTenant(tenant({ shard: 7 })).map((e) => `${e.type} ${e.field}`), ['FieldValueTypeInvalid spec.shard']);
  });
});

describe('Tenant table', () => {
  const now = new Date('2026-11-27T10:05:00Z');

  it('shows the shard the tenant lives on with -o wide only', () => {
    const table = tenantResourceV1beta1.table;
    const shardAt = table.columns.findIndex((c) => c.name === 'Shard');
    assert.equal(table.columns[shardAt].priority, 1);
    assert.equal(table.cells(tenant({ shard: 'west' }, { phase: 'Active', shard: 'east' }), now)[shardAt], 'east');
    assert.equal(table.cells(tenant({ shard: 'west' }), now)[shardAt], '');
  });
});
