import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { TableConvertor } from '../../registry/resource-definition.js';
import { nameColumn } from '../../table/standard-columns.js';
import { ageCell } from '../../table/human-duration.js';

function field(obj: unknown, key: string): string {
  return isPlainObject(obj) && typeof obj[key] === 'string' ? (obj[key] as string) : '';
}

const column = (name: string, description: string, priority = 0) => ({ name, type: 'string', format: '', description, priority });

/** Upstream's source cell: component (else reportingController) and host (else reportingInstance), comma-separated. */
function sourceCell(ev: KubeObject): string {
  const component = field(ev.source, 'component') || field(ev, 'reportingComponent');
  const instance = field(ev.source, 'host') || field(ev, 'reportingInstance');
  return instance ? `${component}, ${instance}` : component;
}

/** Upstream's printEvent cells (wide, as the server always prints) for the core/v1 form of an Event. */
function eventCells(ev: KubeObject, now: Date): unknown[] {
  const first = field(ev, 'firstTimestamp') ? ageCell(field(ev, 'firstTimestamp'), now) : ageCell(field(ev, 'eventTime') || undefined, now);
  let last = field(ev, 'lastTimestamp') ? ageCell(field(ev, 'lastTimestamp'), now) : first;
  let count = typeof ev.count === 'number' ? ev.count : 0;
  if (isPlainObject(ev.series)) {
    last = ageCell(field(ev.series, 'lastObservedTime') || undefined, now);
    count = typeof ev.series.count === 'number' ? ev.series.count : 0;
  } else if (count === 0) {
    count = 1; // Singleton events carry no count in the new API.
  }
  const kind = field(ev.involvedObject, 'kind').toLowerCase();
  const name = field(ev.involvedObject, 'name');
  const target = name ? `${kind}/${name}` : kind;
  return [last, field(ev, 'type'), field(ev, 'reason'), target, field(ev.involvedObject, 'fieldPath'), sourceCell(ev), field(ev, 'message').trim(), first, count, ev.metadata.name];
}

/**
 * The Event table of both APIs (upstream prints Events of either group with
 * one handler): `toCore` turns the served form into the core/v1 one.
 */
export function eventTable(toCore: (o: KubeObject) => KubeObject): TableConvertor {
  return {
    columns: [
      column('Last Seen', 'The time at which the most recent occurrence of this event was recorded.'),
      column('Type', 'Type of this event (Normal, Warning), new types could be added in the future'),
      column('Reason', "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
      column('Object', 'The object that this event is about.'),
      column('Subobject', 'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.', 1),
      column('Source', 'The component reporting this event. Should be a short machine understandable string.', 1),
      column('Message', 'A human-readable description of the status of this operation.'),
      column('First Seen', 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)', 1),
      column('Count', 'The number of times this event has occurred.', 1),
      { ...nameColumn, priority: 1 },
    ],
    cells: (o: KubeObject, now: Date) => eventCells(toCore(o), now),
  };
}
