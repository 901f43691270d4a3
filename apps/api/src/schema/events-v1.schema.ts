import type { StructuralSchema } from '@plinth/apimachinery';
import { objectReferenceSchema } from './event-v1.schema.js';
import { objectMetaProperty, timeSchema, typeMetaProperties } from './object-meta.schema.js';

const str = (description: string): StructuralSchema => ({ type: 'string', description });
const microTime = (description: string): StructuralSchema => ({ type: 'string', format: 'date-time', description });
const DEPRECATED = 'assuring backward compatibility with core.v1 Event type.';

/** events.k8s.io/v1 Event: the same objects as core/v1 Events, with upstream's field names of this version. */
export const eventsV1EventSchema: StructuralSchema = {
  type: 'object',
  description:
    'Event is a report of an event somewhere in the cluster. It generally denotes some state change in the system. Events have a limited retention time and triggers and messages may evolve with time.  Event consumers should not rely on the timing of an event with a given Reason reflecting a consistent underlying trigger, or the continued existence of events with that Reason.  Events should be treated as informative, best-effort, supplemental data.',
  required: ['eventTime'],
  properties: {
    ...typeMetaProperties(),
    action: str('action is what action was taken/failed regarding to the regarding object. It is machine-readable. This field cannot be empty for new Events and it can have at most 128 characters.'),
    deprecatedCount: { type: 'integer', format: 'int32', description: `deprecatedCount is the deprecated field ${DEPRECATED}` },
    deprecatedFirstTimestamp: { ...timeSchema, description: `deprecatedFirstTimestamp is the deprecated field ${DEPRECATED}` },
    deprecatedLastTimestamp: { ...timeSchema, description: `deprecatedLastTimestamp is the deprecated field ${DEPRECATED}` },
    deprecatedSource: {
      type: 'object',
      description: `deprecatedSource is the deprecated field ${DEPRECATED}`,
      properties: { component: str('Component from which the event is generated.'), host: str('Node name on which the event is generated.') },
    },
    eventTime: microTime('eventTime is the time when this Event was first observed. It is required.'),
    metadata: objectMetaProperty(),
    note: str('note is a human-readable description of the status of this operation. Maximal length of the note is 1kB, but libraries should be prepared to handle values up to 64kB.'),
    reason: str('reason is why the action was taken. It is human-readable. This field cannot be empty for new Events and it can have at most 128 characters.'),
    regarding: { ...objectReferenceSchema, description: "regarding contains the object this Event is about. In most cases it's an Object reporting controller implements, e.g. ReplicaSetController implements ReplicaSets and this event is emitted because it acts on some changes in a ReplicaSet object." },
    related: { ...objectReferenceSchema, description: 'related is the optional secondary object for more complex actions. E.g. when regarding object triggers a creation or deletion of related object.' },
    reportingController: str('reportingController is the name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`. This field cannot be empty for new Events.'),
    reportingInstance: str('reportingInstance is the ID of the controller instance, e.g. `kubelet-xyzf`. This field cannot be empty for new Events and it can have at most 128 characters.'),
    series: {
      type: 'object',
      description: "series is data about the Event series this event represents or nil if it's a singleton Event.",
      required: ['count', 'lastObservedTime'],
      properties: {
        count: { type: 'integer', format: 'int32', description: 'count is the number of occurrences in this series up to the last heartbeat time.' },
        lastObservedTime: microTime('lastObservedTime is the time when last Event from the series was seen before last heartbeat.'),
      },
    },
    type: str('type is the type of this event (Normal, Warning), new types could be added in the future. It is machine-readable. This field cannot be empty for new Events.'),
  },
};
