import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldErrorMessage, type KubeObject } from '@plinth/apimachinery';
import { validateEventCreate, validateEventUpdate } from './event.validation.js';

const legacy = (extra: Record<string, unknown> = {}): KubeObject =>
  ({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', namespace: 'ns' }, involvedObject: { kind: 'ConfigMap', namespace: 'ns', name: 'c' }, reason: 'R', ...extra }) as KubeObject;
const modern = (extra: Record<string, unknown> = {}): KubeObject =>
  legacy({ eventTime: '2026-11-25T05:00:00.000000Z', reportingComponent: 'example.com/c', reportingInstance: 'i', action: 'A', type: 'Normal', ...extra });
const messages = (errs: ReturnType<typeof validateEventCreate>) => errs.map(fieldErrorMessage);

describe('Event validation', () => {
  it('accepts an old-style event through core/v1 and refuses it through events.k8s.io/v1', () => {
    assert.deepEqual(validateEventCreate(legacy({ count: 2 }), 'core'), []);
    assert.deepEqual(messages(validateEventCreate(legacy({ count: 2 }), 'events.k8s.io')), [
      'eventTime: Required value',
      'type: Invalid value: "": has invalid value: ',
      'count: Invalid value: "": needs to be unset',
    ]);
  });

  it('lets an event without an involved namespace live in default only (legacy rule)', () => {
    const cluster = { involvedObject: { kind: 'Namespace', name: 'x' } };
    assert.deepEqual(validateEventCreate(legacy({ ...cluster, metadata: { name: 'e', namespace: 'default' } }), 'core'), []);
    assert.deepEqual(messages(validateEventCreate(legacy(cluster), 'core')), ['involvedObject.namespace: Invalid value: "": does not match event.namespace']);
  });

  it('bounds the new-style fields', () => {
    assert.deepEqual(messages(validateEventCreate(modern({ reason: 'r'.repeat(129), message: 'm'.repeat(1025) }), 'core')), [
      'reason: Invalid value: "": can have at most 128 characters',
      'message: Invalid value: "": can have at most 1024 characters',
    ]);
  });

  it('makes the description immutable through events.k8s.io/v1 but not through core/v1', () => {
    const old = modern();
    const changed = modern({ reason: 'Other', series: { count: 2, lastObservedTime: '2026-11-25T05:01:00.000000Z' } });
    assert.deepEqual(validateEventUpdate(changed, old, 'core'), []);
    assert.deepEqual(messages(validateEventUpdate(changed, old, 'events.k8s.io')), ['reason: Invalid value: "Other": field is immutable']);
  });
});
