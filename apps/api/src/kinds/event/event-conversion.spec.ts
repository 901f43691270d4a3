import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@plinth/apimachinery';
import { coreFromEventsV1, eventsV1FromCore } from './event-conversion.js';

describe('Event conversion between core/v1 and events.k8s.io/v1', () => {
  const core = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'e', namespace: 'ns' },
    involvedObject: { kind: 'ConfigMap', name: 'c' },
    message: 'hello',
    source: { component: 'x' },
    firstTimestamp: '2026-01-01T00:00:00Z',
    lastTimestamp: '2026-01-01T00:00:01Z',
    count: 3,
    reportingComponent: 'example.com/ctl',
    reportingInstance: 'i-1',
    reason: 'Seen',
    type: 'Normal',
  } as KubeObject;

  it('renames the fields upstream renames and sets a missing eventTime to null', () => {
    const ev = eventsV1FromCore(core);
    assert.equal(ev.apiVersion, 'events.k8s.io/v1');
    assert.deepEqual(ev.regarding, core.involvedObject);
    assert.equal(ev.note, 'hello');
    assert.deepEqual(ev.deprecatedSource, { component: 'x' });
    assert.equal(ev.deprecatedCount, 3);
    assert.equal(ev.reportingController, 'example.com/ctl');
    assert.equal(ev.eventTime, null);
    for (const f of ['involvedObject', 'message', 'source', 'count', 'reportingComponent', 'firstTimestamp', 'lastTimestamp']) assert.equal(ev[f], undefined, f);
  });

  it('round-trips, and leaves an object already in the target form alone', () => {
    assert.deepEqual(coreFromEventsV1(eventsV1FromCore(core)), core);
    const ev = eventsV1FromCore(core);
    assert.equal(eventsV1FromCore(ev), ev);
    assert.equal(coreFromEventsV1(core), core);
  });
});
