import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldErrorMessage } from '../errors/field-error.js';
import { validateConditions } from './conditions.validation.js';

const ok = { type: 'Ready', status: 'True', reason: 'AllGood', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' };

describe('validateConditions (metav1validation.ValidateConditions)', () => {
  it('accepts well-formed conditions and anything that is not a list', () => {
    assert.deepEqual(validateConditions([ok, { ...ok, type: 'example.com/Other', reason: 'A,B:c_' }], 'status.conditions'), []);
    assert.deepEqual(validateConditions(undefined, 'status.conditions'), []);
  });

  it('reports upstream\'s errors per field', () => {
    const errs = validateConditions([ok, { ...ok, status: 'Maybe', reason: '', lastTransitionTime: '', observedGeneration: -1 }, { type: 'bad type', status: 'True', reason: 'x-y', lastTransitionTime: 't' }], 'c');
    assert.deepEqual(errs.map(fieldErrorMessage), [
      'c[1].type: Duplicate value: "Ready"',
      'c[1].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
      'c[1].observedGeneration: Invalid value: -1: must be greater than or equal to zero',
      'c[1].lastTransitionTime: Required value: must be set',
      'c[1].reason: Required value: must be set',
      'c[2].type: Invalid value: "bad type": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')',
      'c[2].reason: Invalid value: "x-y": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or \'_,:\', and must end with an alphanumeric character or \'_\' (e.g. \'my_name\',  or \'MY_NAME\',  or \'MyName\',  or \'ReasonA,ReasonB\',  or \'ReasonA:ReasonB\', regex used for validation is \'[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?\')',
    ]);
  });
});
