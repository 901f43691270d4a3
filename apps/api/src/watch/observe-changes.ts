import type { ChangeObserver } from '@plinth/storage';

/** Subscribes an observer to the changes of one storage resource (WatchCache.observe); returns the unsubscribe function. */
export type ObserveChanges = (resource: string, observer: ChangeObserver) => () => void;

/** Injection token of {@link ObserveChanges}: follow one storage resource on this replica's change stream. */
export const OBSERVE_CHANGES = Symbol('OBSERVE_CHANGES');
