import { objectMetaProperty, timeSchema, typeMetaProperties } from './object-meta.schema.js';
import type { StructuralSchema } from '@plinth/apimachinery';

const str = (description: string): StructuralSchema => ({ type: 'string', description });
const time = (description: string): StructuralSchema => ({ ...timeSchema, description });

/** v1 ObjectReference, as Event.involvedObject uses it. */
export const objectReferenceSchema: StructuralSchema = {
  type: 'object',
  description: 'ObjectReference contains enough information to let you inspect or modify the referred object.',
  properties: {
    apiVersion: str('API version of the referent.'),
    fieldPath: str('If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].'),
    kind: str('Kind of the referent. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds'),
    name: str('Name of the referent. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names'),
    namespace: str('Namespace of the referent. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/'),
    resourceVersion: str('Specific resourceVersion to which this reference is made, if any. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#concurrency-control-and-consistency'),
    uid: str('UID of the referent. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#uids'),
  },
};

/** v1 Event (core group): a report of an event somewhere in the cluster. */
export const eventSchema: StructuralSchema = {
  type: 'object',
  description:
    'Event is a report of an event somewhere in the cluster. Events have a limited retention time and triggers and messages may evolve with time. Event consumers should not rely on the timing of an event with a given Reason reflecting a consistent underlying trigger, or the continued existence of events with that Reason. Events should be treated as informative, best-effort, supplemental data.',
  required: ['metadata', 'involvedObject'],
  properties: {
    ...typeMetaProperties(),
    action: str('What action was taken/failed regarding to the Regarding object.'),
    count: { type: 'integer', format: 'int32', description: 'The number of times this event has occurred.' },
    eventTime: { type: 'string', format: 'date-time', description: 'Time when this Event was first observed.' },
    firstTimestamp: time('The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)'),
    involvedObject: { ...objectReferenceSchema, description: 'The object that this event is about.' },
    lastTimestamp: time('The time at which the most recent occurrence of this event was recorded.'),
    message: str('A human-readable description of the status of this operation.'),
    metadata: objectMetaProperty(),
    reason: str('This should be a short, machine understandable string that gives the reason for the transition into the object\'s current status.'),
    related: { ...objectReferenceSchema, description: 'Optional secondary object for more complex actions.' },
    reportingComponent: str('Name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`.'),
    reportingInstance: str('ID of the controller instance, e.g. `kubelet-xyzf`.'),
    series: {
      type: 'object',
      description: 'Data about the Event series this event represents or nil if it\'s a singleton Event.',
      properties: {
        count: { type: 'integer', format: 'int32', description: 'Number of occurrences in this series up to the last heartbeat time' },
        lastObservedTime: { type: 'string', format: 'date-time', description: 'Time of the last occurrence observed' },
      },
    },
    source: {
      type: 'object',
      description: 'The component reporting this event. Should be a short machine understandable string.',
      properties: { component: str('Component from which the event is generated.'), host: str('Node name on which the event is generated.') },
    },
    type: str('Type of this event (Normal, Warning), new types could be added in the future'),
  },
};
