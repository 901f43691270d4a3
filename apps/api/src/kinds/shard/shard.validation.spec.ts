import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FieldError, KubeObject } from '@plinth/apimachinery';
import { validateShard, validateShardCreate, validateShardStatus } from './shard.validation.js';
import { platformShardStrategy, shardStatusStrategy, shardStrategy } from './shard.strategy.js';
import type { StrategyContext } from '../../registry/resource-definition.js';

const causes = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`).sort();

function shard(name: string, spec?: unknown, status?: unknown): KubeObject {
  return { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Shard', metadata: { name }, ...(spec === undefined ? {} : { spec }), ...(status === undefined ? {} : { status }) };
}

const ref = { name: 'shard-a-url', namespace: 'default', key: 'url' };

describe('validateShard', () => {
  it('accepts a secretRef with a Secret name, a namespace and a key, and a boolean unschedulable', () => {
    assert.deepEqual(validateShard(shard('a', { secretRef: ref, unschedulable: true })), []);
    assert.deepEqual(validateShard(shard('a', { secretRef: { name: 'x.y', namespace: 'kube-system' } })), []);
  });

  it('requires spec.secretRef and its name and namespace', () => {
    assert.deepEqual(causes(validateShard(shard('a'))), ['FieldValueRequired spec.secretRef']);
    assert.deepEqual(causes(validateShard(shard('a', { secretRef: {} }))), ['FieldValueRequired spec.secretRef.name', 'FieldValueRequired spec.secretRef.namespace']);
    assert.deepEqual(causes(validateShard(shard('a', { secretRef: { name: '', namespace: '' } }))), ['FieldValueRequired spec.secretRef.name', 'FieldValueRequired spec.secretRef.namespace']);
  });

  it('refuses a name that is not a Secret name, a namespace that is not a label, a key a Secret cannot have', () => {
    const errs = validateShard(shard('a', { secretRef: { name: 'Bad_Name', namespace: 'a.b', key: 'a b' } }));
    assert.deepEqual(causes(errs), ['FieldValueInvalid spec.secretRef.key', 'FieldValueInvalid spec.secretRef.name', 'FieldValueInvalid spec.secretRef.namespace']);
    assert.match(errs.find((e) => e.field === 'spec.secretRef.namespace')!.detail ?? '', /must not contain dots/);
  });

  it('refuses values of the wrong type', () => {
    assert.deepEqual(causes(validateShard(shard('a', 'x'))), ['FieldValueTypeInvalid spec']);
    assert.deepEqual(causes(validateShard(shard('a', { secretRef: 'x', unschedulable: 'yes' }))), ['FieldValueTypeInvalid spec.secretRef', 'FieldValueTypeInvalid spec.unschedulable']);
    assert.deepEqual(causes(validateShard(shard('a', { secretRef: { name: 1, namespace: 'default' } }))), ['FieldValueTypeInvalid spec.secretRef.name']);
  });

  it('lets the default shard have no secretRef, and forbids it one', () => {
    assert.deepEqual(validateShard(shard('default', { unschedulable: false })), []);
    assert.deepEqual(causes(validateShard(shard('default', { secretRef: ref }))), ['FieldValueForbidden spec.secretRef']);
  });
});

describe('validateShardCreate', () => {
  it('refuses the name default, which the platform registers itself', () => {
    const errs = validateShardCreate(shard('default', { secretRef: ref }));
    assert.deepEqual(causes(errs), ['FieldValueInvalid metadata.name']);
    assert.match(errs[0].detail ?? '', /reserved/);
    assert.deepEqual(validateShardCreate(shard('default-2', { secretRef: ref })), []);
  });
});

describe('validateShardStatus', () => {
  const ready = { type: 'Ready', status: 'True', reason: 'Reachable', message: '', lastTransitionTime: '2026-11-27T00:00:00Z' };

  it('accepts what the platform reports', () => {
    assert.deepEqual(validateShardStatus(shard('a', undefined, { conditions: [ready], tenants: 3, objects: 10, bytes: 4096, host: 'db1:5432/plinth', observedGeneration: 2 })), []);
  });

  it('refuses negative or fractional counts, bad conditions, and a host with a user part', () => {
    const errs = validateShardStatus(
      shard('a', undefined, { conditions: [{ ...ready, status: 'Maybe' }, ready], tenants: -1, objects: 1.5, bytes: '7', host: 'alice:secret@db1:5432/plinth' }),
    );
    assert.deepEqual(causes(errs), [
      'FieldValueDuplicate status.conditions[1].type',
      'FieldValueInvalid status.host',
      'FieldValueInvalid status.tenants',
      'FieldValueNotSupported status.conditions[0].status',
      'FieldValueTypeInvalid status.bytes',
      'FieldValueTypeInvalid status.objects',
    ]);
    // The refused host is not echoed: it may hold a password.
    assert.ok(!JSON.stringify(errs).includes('secret'));
  });
});

describe('shard strategies', () => {
  const ctx = {} as StrategyContext;

  it('clear the status a client sends on create and default secretRef.key to "url"', () => {
    const obj = shard('a', { secretRef: { name: 's', namespace: 'default' } }, { host: 'evil:1/x', tenants: 9 });
    shardStrategy.prepareForCreate(obj, ctx);
    assert.deepEqual(obj.status, {});
    assert.equal((obj.spec as { secretRef: { key: string } }).secretRef.key, 'url');
  });

  it('keep the stored status on an update of the main resource', () => {
    const old = shard('a', { secretRef: ref }, { tenants: 2 });
    const next = shard('a', { secretRef: { ...ref, key: '' }, unschedulable: true }, { tenants: 99 });
    shardStrategy.prepareForUpdate(next, old, ctx);
    assert.deepEqual(next.status, { tenants: 2 });
    assert.equal((next.spec as { secretRef: { key: string } }).secretRef.key, 'url');
  });

  it('refuse a client creating default but let the platform create it and a client update it', async () => {
    assert.deepEqual(causes(await shardStrategy.validate(shard('default'), ctx)), ['FieldValueInvalid metadata.name']);
    assert.deepEqual(await platformShardStrategy.validate(shard('default'), ctx), []);
    assert.deepEqual(await shardStrategy.validateUpdate(shard('default', { unschedulable: true }), shard('default'), ctx), []);
  });

  it('let a status write change only status', () => {
    const old = shard('a', { secretRef: ref }, {});
    old.metadata.labels = { a: 'b' };
    const next = shard('a', { secretRef: { ...ref, name: 'other' } }, { tenants: 1 });
    next.metadata.resourceVersion = '7';
    shardStatusStrategy.prepareForUpdate(next, old, ctx);
    assert.deepEqual(next.spec, old.spec);
    assert.deepEqual(next.metadata, { name: 'a', labels: { a: 'b' }, resourceVersion: '7' });
    assert.deepEqual(next.status, { tenants: 1 });
  });
});
