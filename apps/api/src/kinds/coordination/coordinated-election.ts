import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { OLDEST_EMULATION_VERSION } from './lease-candidate.validation.js';
import { compareSemver, parseSemverTolerant, type SemanticVersion, ZERO_VERSION } from './semantic-version.js';

/** How long candidates have to answer a ping (upstream's electionDuration). */
export const ELECTION_DURATION_MS = 5_000;
/** A candidate not renewed for this long is ignored, and deleted by the collector (leaseCandidateValidDuration). */
export const CANDIDATE_VALID_MS = 30 * 60_000;
/** The leaseDurationSeconds of a Lease the election writes (defaultLeaseDurationSeconds). */
export const ELECTED_LEASE_DURATION_SECONDS = 5;

/** The fields of a LeaseCandidate the election reads. */
export interface Candidate {
  name: string;
  creationTimestamp: string;
  leaseName: string;
  binaryVersion: string;
  emulationVersion: string;
  strategy: string;
  /** Milliseconds since the epoch; undefined when unset. */
  pingTime?: number;
  renewTime?: number;
}

/** The fields of a Lease the election reads. */
export interface LeaseState {
  holderIdentity?: string;
  strategy?: string;
  renewTime?: number;
  leaseDurationSeconds?: number;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function time(v: unknown): number | undefined {
  const t = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isNaN(t) ? undefined : t;
}

/** A stored LeaseCandidate as the election sees it. */
export function candidateOf(o: KubeObject): Candidate {
  const s = isPlainObject(o.spec) ? o.spec : {};
  return {
    name: str(o.metadata.name),
    creationTimestamp: str(o.metadata.creationTimestamp),
    leaseName: str(s.leaseName),
    binaryVersion: str(s.binaryVersion),
    emulationVersion: str(s.emulationVersion),
    strategy: str(s.strategy),
    pingTime: time(s.pingTime),
    renewTime: time(s.renewTime),
  };
}

/** A stored Lease as the election sees it. */
export function leaseStateOf(o: KubeObject): LeaseState {
  const s = isPlainObject(o.spec) ? o.spec : {};
  return {
    holderIdentity: typeof s.holderIdentity === 'string' ? s.holderIdentity : undefined,
    strategy: typeof s.strategy === 'string' ? s.strategy : undefined,
    renewTime: time(s.renewTime),
    leaseDurationSeconds: typeof s.leaseDurationSeconds === 'number' ? s.leaseDurationSeconds : undefined,
  };
}

const versionOrZero = (v: string): SemanticVersion => parseSemverTolerant(v) ?? ZERO_VERSION;

/** Negative when `a` is the better leader: the lower emulation version, then the lower binary version, then the older candidate. */
export function compareCandidates(a: Candidate, b: Candidate): number {
  const byEmulation = compareSemver(versionOrZero(a.emulationVersion), versionOrZero(b.emulationVersion));
  if (byEmulation !== 0) return byEmulation;
  const byBinary = compareSemver(versionOrZero(a.binaryVersion), versionOrZero(b.binaryVersion));
  if (byBinary !== 0) return byBinary;
  return Date.parse(a.creationTimestamp) > Date.parse(b.creationTimestamp) ? 1 : -1;
}

/** OldestEmulationVersion's pick among candidates with parseable versions; undefined when none has. */
export function pickLeader(candidates: Candidate[]): Candidate | undefined {
  let best: Candidate | undefined;
  for (const c of candidates) {
    if (!parseSemverTolerant(c.emulationVersion) || !parseSemverTolerant(c.binaryVersion)) continue;
    if (!best || compareCandidates(best, c) > 0) best = c;
  }
  return best;
}

/**
 * The strategy of the candidate with the highest binary version; an Error
 * when two at that version ask for different ones (a user error: the Lease
 * is left alone until resolved), or when there are no candidates.
 */
export function pickStrategy(candidates: Candidate[]): string | Error {
  if (candidates.length === 0) return new Error('no candidates');
  let chosen = candidates[0];
  let highest = versionOrZero(chosen.binaryVersion);
  for (const c of candidates.slice(1)) {
    const cmp = compareSemver(highest, versionOrZero(c.binaryVersion));
    if (cmp < 0) {
      chosen = c;
      highest = versionOrZero(c.binaryVersion);
    } else if (cmp === 0 && c.strategy !== chosen.strategy) {
      return new Error(`candidates "${chosen.name}", "${c.name}" at same binary version but received differing strategies ${chosen.strategy}, ${c.strategy}`);
    }
  }
  return chosen.strategy;
}

/** Whether the Lease has run out (no renewTime or duration, or renewTime + duration passed). */
export function leaseExpired(lease: LeaseState, now: number): boolean {
  return lease.renewTime === undefined || lease.leaseDurationSeconds === undefined || lease.renewTime + lease.leaseDurationSeconds * 1000 < now;
}

/** Whether the candidate has not been renewed for {@link CANDIDATE_VALID_MS}. */
export function candidateExpired(c: Candidate, now: number): boolean {
  return c.renewTime === undefined || c.renewTime + CANDIDATE_VALID_MS < now;
}

/**
 * Upstream's electionNeeded: no Lease, an expired one or one without a
 * holder; a candidate not renewed for half the valid duration (every 15
 * minutes everyone is pinged, so none is collected while alive); or a
 * better OldestEmulationVersion leader than the holder. Pure.
 */
export function electionNeeded(candidates: Candidate[], lease: LeaseState | undefined, now: number): boolean {
  if (!lease || leaseExpired(lease, now) || !lease.holderIdentity) return true;
  if (candidates.some((c) => c.renewTime !== undefined && c.renewTime + CANDIDATE_VALID_MS / 2 < now)) return true;
  const strategy = pickStrategy(candidates);
  if (strategy instanceof Error || strategy !== OLDEST_EMULATION_VERSION) return false;
  const best = pickLeader(candidates);
  return best !== undefined && best.name !== lease.holderIdentity;
}

/** What one step of an election does next. */
export type ElectionStep =
  /** Set pingTime on these candidates, then look again. */
  | { kind: 'ping'; names: string[] }
  /** Candidates were pinged and may still answer: look again later. */
  | { kind: 'wait' }
  /** Nobody answered in time. */
  | { kind: 'none' }
  /** Write the Lease with this strategy and, for OldestEmulationVersion, this holder. */
  | { kind: 'elect'; strategy: string; holder?: string }
  /** The candidates disagree on the strategy. */
  | { kind: 'conflict'; error: Error };

/**
 * Upstream's reconcileElectionStep once an election is needed: candidates
 * neither renewed nor pinged within the election duration are pinged (again
 * only once they answered the last ping); while a ping is unanswered and
 * younger than the election duration, wait; then the candidates renewed
 * within the election duration elect, by the strategy of the highest
 * binary version. Pure.
 */
export function electionStep(candidates: Candidate[], now: number): ElectionStep {
  const ping: string[] = [];
  let waiting = false;
  for (const c of candidates) {
    const awaitingAnswer = c.pingTime !== undefined && c.renewTime !== undefined && c.renewTime < c.pingTime;
    if (awaitingAnswer && c.pingTime! + ELECTION_DURATION_MS > now) {
      waiting = true;
      continue;
    }
    if (c.renewTime !== undefined && c.renewTime + ELECTION_DURATION_MS > now) continue;
    if (c.pingTime === undefined || (c.pingTime + ELECTION_DURATION_MS < now && c.renewTime !== undefined && c.pingTime < c.renewTime)) ping.push(c.name);
  }
  if (ping.length > 0) return { kind: 'ping', names: ping };
  if (waiting) return { kind: 'wait' };
  const acked = candidates.filter((c) => c.renewTime !== undefined && c.renewTime + ELECTION_DURATION_MS > now);
  if (acked.length === 0) return { kind: 'none' };
  const strategy = pickStrategy(acked);
  if (strategy instanceof Error) return { kind: 'conflict', error: strategy };
  return { kind: 'elect', strategy, holder: strategy === OLDEST_EMULATION_VERSION ? pickLeader(acked)?.name : undefined };
}
