/**
 * What a worker process tells its primary over the cluster's IPC channel.
 * One message: the worker serves (start-up done, post-start hooks run, the
 * kubeconfig written). A worker that fails to start says why on stderr and
 * exits with the start-up failure's code instead.
 */
export interface WorkerServingMessage {
  type: 'plinth:serving';
  /** `https://host:port`, the port shared by every worker. */
  url: string;
}

/** True when `m` is a {@link WorkerServingMessage}. Pure. */
export function isServingMessage(m: unknown): m is WorkerServingMessage {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'plinth:serving' && typeof (m as { url?: unknown }).url === 'string';
}

/** What the primary tells its workers: every worker of the host serves (once started, and to each worker restarted later). */
export interface WorkersServingMessage {
  type: 'plinth:workers-serving';
}

/** True when `m` is a {@link WorkersServingMessage}. Pure. */
export function isWorkersServingMessage(m: unknown): m is WorkersServingMessage {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'plinth:workers-serving';
}
