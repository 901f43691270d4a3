import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (USER_HZ; 100 on Linux x86-64 and arm64). */
const TICKS_PER_SECOND = 100;

interface ProcStat {
  ppid: number;
  /** utime + stime + cutime + cstime, in ticks: the process and its children it has reaped. */
  ticks: number;
}

/** The fields of /proc/<pid>/stat this module reads, or undefined if the process is gone. */
function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: the fields that follow start after its last ')'.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) };
}

/**
 * CPU time in milliseconds used so far by process `pid` and every process
 * below it, including children that have exited and been reaped (the
 * kernel adds their time to the parent's). PostgreSQL's postmaster reaps
 * its backends, so for it this is the database's whole CPU use. Linux only.
 */
export function processTreeCpuMs(pid: number): number {
  const stats = new Map<number, ProcStat>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = readStat(Number(entry));
    if (s) stats.set(Number(entry), s);
  }
  const children = new Map<number, number[]>();
  for (const [p, s] of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), p]);
  let ticks = 0;
  const pending = [pid];
  while (pending.length > 0) {
    const p = pending.pop()!;
    ticks += stats.get(p)?.ticks ?? 0;
    pending.push(...(children.get(p) ?? []));
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** The postmaster's pid of the embedded cluster under `dataDir` (first line of its postmaster.pid). */
export function postmasterPid(dataDir: string): number {
  return Number(readFileSync(`${dataDir}/pgdata/postmaster.pid`, 'utf8').split('\n')[0]);
}

/** CPU milliseconds of each party to a benchmark phase. */
export interface CpuSplit {
  server: number;
  postgres: number;
  client: number;
}

/**
 * Measures the CPU the API server (`serverPid`, if any), PostgreSQL
 * (`postgresPid`, if any; 0 without) and this benchmark process spend
 * while `phase` runs.
 */
export async function cpuDuring<T>(pids: { serverPid?: number; postgresPid?: number }, phase: () => Promise<T>): Promise<{ result: T; cpu: CpuSplit }> {
  const read = () => ({
    server: pids.serverPid ? processTreeCpuMs(pids.serverPid) : 0,
    postgres: pids.postgresPid ? processTreeCpuMs(pids.postgresPid) : 0,
    client: process.cpuUsage(),
  });
  const before = read();
  const result = await phase();
  const after = read();
  const clientUs = process.cpuUsage(before.client);
  return { result, cpu: { server: after.server - before.server, postgres: after.postgres - before.postgres, client: (clientUs.user + clientUs.system) / 1000 } };
}
