import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@plinth/apimachinery';
import { guardManagedFields, INVALID_MANAGED_FIELDS_AFTER_ADMISSION, managedFieldsBefore } from './field-tracking.js';
import type { WriteContext } from './write-context.js';

const ctx = () => ({ fieldManager: 'kubectl', applied: false, warnings: [] as string[] }) as unknown as WriteContext & { warnings: string[] };
const entry = () => ({ manager: 'kubectl', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } });
const object = (managedFields: unknown): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', managedFields: managedFields as KubeObject['metadata']['managedFields'] } });

describe('guardManagedFields', () => {
  it('does not decode again managedFields that admission left as they were (the same array and entries)', () => {
    // Entries the field manager could not have written (no fieldsType): only a decode would find that out.
    const written = [{ manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:data': {} } }];
    const obj = object(written);
    const c = ctx();
    const before = managedFieldsBefore(written);
    guardManagedFields(c, obj, before);
    assert.equal(obj.metadata.managedFields, written);
    assert.deepEqual(c.warnings, []);
  });

  it('restores the entries from before admission, with upstream warning, when a webhook left invalid ones', () => {
    const written = [entry()];
    const obj = object(written);
    const c = ctx();
    const before = managedFieldsBefore(written);
    obj.metadata.managedFields = [{ manager: 'webhook', operation: 'Sideways' }] as unknown as KubeObject['metadata']['managedFields'];
    guardManagedFields(c, obj, before);
    assert.deepEqual(obj.metadata.managedFields, [entry()]);
    assert.equal(c.warnings.length, 1);
    assert.ok(c.warnings[0].startsWith(INVALID_MANAGED_FIELDS_AFTER_ADMISSION));
  });

  it('checks an entry that a plugin changed in place (the same array and entry object)', () => {
    const written = [entry()];
    const obj = object(written);
    const c = ctx();
    const before = managedFieldsBefore(written);
    (written[0] as Record<string, unknown>).operation = 'Sideways';
    guardManagedFields(c, obj, before);
    assert.deepEqual(obj.metadata.managedFields, [entry()], 'the entry as it was before admission');
    assert.equal(c.warnings.length, 1);
  });
});
