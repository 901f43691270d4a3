import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@plinth/apimachinery';
import { dropDisabledFields, gatedFieldDescription, validateGatedEnumValues } from './gated-fields.js';

const on = { featureEnabled: () => true };
const off = { featureEnabled: () => false };
const frobber = (spec: Record<string, unknown>): KubeObject => ({ metadata: { name: 'f' }, spec });
const fields = [{ path: 'spec.width', gate: 'Frobber2D' }, { path: 'spec.items.*.depth', gate: 'Frobber2D' }];
const values = [{ path: 'spec.restartPolicy', value: 'OnTuesday', gate: 'FrobberRestartPolicyOnTuesday' }];

describe('gated fields and enum values', () => {
  it('keeps a gated field while its gate is on, on create and update', () => {
    const obj = frobber({ width: 3, items: [{ depth: 1 }] });
    dropDisabledFields(obj, undefined, fields, on);
    assert.deepEqual(obj.spec, { width: 3, items: [{ depth: 1 }] });
  });

  it('drops a gated field on create while its gate is off, also inside lists', () => {
    const obj = frobber({ height: 1, width: 3, items: [{ depth: 1, name: 'a' }, { name: 'b' }] });
    dropDisabledFields(obj, undefined, fields, off);
    assert.deepEqual(obj.spec, { height: 1, items: [{ name: 'a' }, { name: 'b' }] });
  });

  it('keeps a gated field on update while off only if the stored object used it', () => {
    const unused = frobber({ width: 4 });
    dropDisabledFields(unused, frobber({}), fields, off);
    assert.deepEqual(unused.spec, {});
    const used = frobber({ width: 4 });
    dropDisabledFields(used, frobber({ width: 3 }), fields, off);
    assert.deepEqual(used.spec, { width: 4 });
  });

  it('refuses a gated enum value on create and on update unless the stored object held it', () => {
    const obj = frobber({ restartPolicy: 'OnTuesday' });
    assert.deepEqual(validateGatedEnumValues(obj, undefined, values, on), []);
    assert.deepEqual(validateGatedEnumValues(obj, undefined, values, off), [
      { type: 'FieldValueInvalid', field: 'spec.restartPolicy', value: 'OnTuesday', detail: 'only allowed if the FrobberRestartPolicyOnTuesday feature is enabled' },
    ]);
    assert.equal(validateGatedEnumValues(obj, frobber({ restartPolicy: 'Always' }), values, off).length, 1);
    assert.deepEqual(validateGatedEnumValues(obj, frobber({ restartPolicy: 'OnTuesday' }), values, off), []);
    assert.deepEqual(validateGatedEnumValues(frobber({ restartPolicy: 'Always' }), undefined, values, off), []);
  });

  it('describes gated fields as upstream does', () => {
    assert.equal(gatedFieldDescription('Frobber2D', 'ALPHA'), 'This field is alpha-level and is only honored by servers that enable the Frobber2D feature.');
    assert.equal(gatedFieldDescription('Frobber2D', 'BETA'), 'This field is beta-level and is only honored by servers that enable the Frobber2D feature.');
    assert.equal(gatedFieldDescription('Frobber2D', 'GA'), '');
  });
});
