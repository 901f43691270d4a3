import type { KubeObject } from '@plinth/apimachinery';

/** core/v1 field → events.k8s.io/v1 field, where the two versions name a field differently (upstream's conversion.go). */
const RENAMED: ReadonlyArray<readonly [core: string, events: string]> = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
  ['reportingComponent', 'reportingController'],
];

function rename(obj: KubeObject, apiVersion: string, pairs: ReadonlyArray<readonly [string, string]>): KubeObject {
  const out: Record<string, unknown> = { ...obj, apiVersion, kind: 'Event' };
  for (const [from, to] of pairs) {
    delete out[from];
    if (obj[from] !== undefined) out[to] = obj[from];
  }
  return out as KubeObject;
}

/**
 * A core/v1 Event (the stored form) as events.k8s.io/v1 serves it.
 * Returns a new object (metadata shared); an object already in the
 * events.k8s.io form is returned as is.
 */
export function eventsV1FromCore(obj: KubeObject): KubeObject {
  if (obj.apiVersion === 'events.k8s.io/v1') return obj;
  const out = rename(obj, 'events.k8s.io/v1', RENAMED);
  // A MicroTime is never omitted: an event recorded through core/v1 without one shows null, as upstream.
  if (out.eventTime === undefined) out.eventTime = null;
  return out;
}

/**
 * An events.k8s.io/v1 Event in its stored, core/v1 form. Returns a new
 * object (metadata shared); a core/v1 object is returned as is.
 */
export function coreFromEventsV1(obj: KubeObject): KubeObject {
  if (obj.apiVersion !== 'events.k8s.io/v1') return obj;
  const out = rename(obj, 'v1', RENAMED.map(([core, events]) => [events, core] as const));
  if (out.eventTime === null) delete out.eventTime;
  return out;
}
