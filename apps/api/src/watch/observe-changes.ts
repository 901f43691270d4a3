import type { ChangeObserver } from '@plinth/storage';

/** Subscribes an observer to the changes of one storage resource (WatchCache.observe); returns the unsubscribe function. */
export type ObserveChanges = (resource: string, observer: ChangeObserver) => () => void;
