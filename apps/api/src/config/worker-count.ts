import { availableParallelism, hostname, networkInterfaces } from 'node:os';
import { parseHostList } from '@plinth/storage';

/** The most worker processes one host runs (PLINTH_WORKERS' own bound). */
export const MAX_WORKERS = 64;

/** How the worker count was chosen, for the start-up log line. */
export type WorkersReason = 'PLINTH_WORKERS' | 'cpus' | 'cpus less one for a local PostgreSQL';

/** The worker count of this host and why. */
export interface WorkerChoice {
  workers: number;
  reason: WorkersReason;
}

/** What the default worker count depends on. */
export interface WorkerHost {
  /** CPUs this process may use (`os.availableParallelism()`: honours `taskset` and cgroup CPU sets). */
  cpus: number;
  /** PostgreSQL runs on this host: the embedded one, or a DATABASE_URL whose hosts are all this host. */
  localDatabase: boolean;
}

/**
 * The worker count: PLINTH_WORKERS when set; otherwise one per CPU, less
 * one when PostgreSQL runs on the same host, whose backends then compete
 * with the workers for the same cores (on 2 cores, two workers beside a
 * local PostgreSQL served 27% fewer creates than one, docs/benchmarks.md);
 * at least 1, at most {@link MAX_WORKERS}. Pure.
 */
export function chooseWorkers(explicit: number | undefined, host: WorkerHost): WorkerChoice {
  if (explicit !== undefined) return { workers: explicit, reason: 'PLINTH_WORKERS' };
  const cpus = Math.max(1, Math.floor(host.cpus));
  if (host.localDatabase && cpus > 1) return { workers: Math.min(MAX_WORKERS, cpus - 1), reason: 'cpus less one for a local PostgreSQL' };
  return { workers: Math.min(MAX_WORKERS, cpus), reason: 'cpus' };
}

/** Addresses and names that are this host: loopback, its interfaces' addresses, its host name. */
function ownNames(): Set<string> {
  const names = new Set<string>(['localhost', hostname().toLowerCase()]);
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) names.add(a.address.toLowerCase());
  return names;
}

function isLocalHost(host: string, own: Set<string>): boolean {
  const h = host.toLowerCase();
  // No host, or a folder: a Unix socket, on this host by definition.
  if (h === '' || h.startsWith('/')) return true;
  return h === '::1' || /^127\./.test(h) || h.endsWith('.localhost') || own.has(h);
}

/**
 * Whether the database a server with this DATABASE_URL uses runs on this
 * host: no URL (the embedded PostgreSQL), or every host of the URL (its
 * `?host=` too, a socket folder or a name) loopback, a Unix socket, or an
 * address or the name of this host. A URL that does not parse counts as
 * remote (configuration refuses it anyway).
 */
export function databaseIsLocal(databaseUrl: string | undefined): boolean {
  if (databaseUrl === undefined) return true;
  const own = ownNames();
  try {
    const { hosts } = parseHostList(databaseUrl);
    const query = /\?([^#]*)/.exec(databaseUrl)?.[1];
    const paramHost = query === undefined ? null : new URLSearchParams(query).get('host');
    const named = paramHost === null ? hosts.map((h) => h.host) : [...hosts.filter((h) => h.host !== '').map((h) => h.host), ...paramHost.split(',')];
    return named.every((h) => isLocalHost(h, own));
  } catch {
    return false;
  }
}

/** The worker count of this process's host for PLINTH_WORKERS (`explicit`) and DATABASE_URL. */
export function workersForThisHost(explicit: number | undefined, databaseUrl: string | undefined): WorkerChoice {
  return chooseWorkers(explicit, { cpus: availableParallelism(), localDatabase: databaseIsLocal(databaseUrl) });
}
