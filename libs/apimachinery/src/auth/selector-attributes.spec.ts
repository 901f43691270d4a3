import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldSelectorAttributes, labelSelectorAttributes } from './selector-attributes.js';

describe('selectors as authorizers receive them (KEP-4601)', () => {
  it('field selectors: = and == are In, != is NotIn; empty or unparsable is none', () => {
    assert.deepEqual(fieldSelectorAttributes('spec.nodeName==n1,metadata.name!=x'), [
      { key: 'metadata.name', operator: 'NotIn', values: ['x'] },
      { key: 'spec.nodeName', operator: 'In', values: ['n1'] },
    ]);
    assert.equal(fieldSelectorAttributes(''), undefined);
    assert.equal(fieldSelectorAttributes(undefined), undefined);
    assert.equal(fieldSelectorAttributes('nonsense'), undefined);
  });

  it('label selectors: equality and sets as In/NotIn (values sorted), Exists, DoesNotExist; > and < left out', () => {
    assert.deepEqual(labelSelectorAttributes('env=prod,tier in (web,api),!legacy,owner,size>3,zone!=eu'), [
      { key: 'env', operator: 'In', values: ['prod'] },
      { key: 'legacy', operator: 'DoesNotExist' },
      { key: 'owner', operator: 'Exists' },
      { key: 'tier', operator: 'In', values: ['api', 'web'] },
      { key: 'zone', operator: 'NotIn', values: ['eu'] },
    ]);
    assert.equal(labelSelectorAttributes('size>3'), undefined);
    assert.equal(labelSelectorAttributes('a in ('), undefined);
  });
});
