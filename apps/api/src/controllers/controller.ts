/**
 * A controller the {@link ControllerManager} runs once per cluster: on the
 * elected replica in cluster mode, in process on a single node. `start`
 * is called when this replica begins to run it (it must then resync from
 * storage: another replica may have left work half done), `stop` when it
 * stops (shutdown, or leadership lost), resolving once its work in
 * progress has ended. Both may be called again later (leadership regained).
 */
export interface Controller {
  /** Its name: the election's, the work queue's and the metrics' label. */
  readonly name: string;
  start(): Promise<void> | void;
  stop(): Promise<void>;
}
