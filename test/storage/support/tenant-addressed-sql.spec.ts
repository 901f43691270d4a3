import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tenantsAddressedBy } from './tenant-addressed-sql.js';

const verdict = (text: string, values: unknown[] = []) => tenantsAddressedBy({ text, values });

describe('tenantsAddressedBy', () => {
  it('accepts statements that bind one tenant: predicates, the tenants key, inserts, write functions and batches', () => {
    assert.deepEqual(verdict('select * from "objects" where "tenant" = $1 and "resource" = $2', ['acme', 'configmaps']).tenants, ['acme']);
    assert.deepEqual(verdict('SELECT 1 FROM tenants t WHERE t.name = $1', ['acme']).tenants, ['acme']);
    assert.deepEqual(verdict('insert into "tenant_usage" ("tenant", "usage_key") values ($1, $2), ($3, $4)', ['acme', '', 'acme', 'pods']).tenants, ['acme']);
    assert.deepEqual(verdict('CALL plinth_create_durable($1, $2, $3, $4, $5::jsonb, NULL)', ['acme', 'configmaps', 'ns', 'n', '{}']).tenants, ['acme']);
    const ops = JSON.stringify([{ op: 'c', t: 'acme' }, { op: 'd', t: 'acme' }]);
    assert.deepEqual(verdict('CALL plinth_write_batch_durable($1::jsonb, NULL)', [ops]).tenants, ['acme']);
    assert.equal(verdict('SELECT plinth_flush()').ok, true);
    assert.equal(verdict('select "value" from "revision_counter"').ok, true);
    assert.equal(verdict('BEGIN').ok, true);
  });

  it('refuses a statement over several tenants or none', () => {
    assert.equal(verdict('select * from "objects" where "resource" = $1', ['configmaps']).why, 'binds no tenant');
    assert.equal(verdict('select * from objects where tenant = ANY($1)', [['acme', 'globex']]).ok, false);
    assert.equal(verdict('select * from objects where tenant = $1 or tenant = $2', ['acme', 'globex']).ok, false);
    assert.equal(verdict('insert into "tenant_usage" ("tenant", "usage_key") values ($1, $2), ($3, $4)', ['acme', '', 'globex', '']).ok, false);
    const ops = JSON.stringify([{ op: 'c', t: 'acme' }, { op: 'c', t: 'globex' }]);
    assert.match(verdict('CALL plinth_write_batch_durable($1::jsonb, NULL)', [ops]).why, /several tenants: acme, globex/);
    // A watermark read joined to tenant rows is no longer only a watermark.
    assert.equal(verdict('select "value" from "revision_counter", "objects"').ok, false);
    assert.equal(verdict('select count(*) from changes where revision > $1', [5]).ok, false);
  });
});
