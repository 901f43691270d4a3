import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Candidate, electionNeeded, electionStep, pickLeader, pickStrategy } from './coordinated-election.js';
import { validateLeaseCandidate } from './lease-candidate.validation.js';
import { compareSemver, parseSemver, parseSemverTolerant } from './semantic-version.js';

const NOW = Date.parse('2026-01-01T00:10:00Z');

function cand(name: string, emulationVersion: string, binaryVersion: string, extra: Partial<Candidate> = {}): Candidate {
  return { name, creationTimestamp: '2026-01-01T00:00:00Z', leaseName: 'l', emulationVersion, binaryVersion, strategy: 'OldestEmulationVersion', renewTime: NOW - 1000, ...extra };
}

describe('coordinated election (KEP-4355)', () => {
  it('OldestEmulationVersion picks the lowest emulation version, then binary version, then the oldest candidate', () => {
    assert.equal(pickLeader([cand('new', '1.35.0', '1.35.0'), cand('old', '1.34.0', '1.35.0')])?.name, 'old');
    assert.equal(pickLeader([cand('b36', '1.34.0', '1.36.0'), cand('b35', '1.34.0', '1.35.0')])?.name, 'b35');
    const older = cand('older', '1.34.0', '1.35.0', { creationTimestamp: '2025-12-31T00:00:00Z' });
    assert.equal(pickLeader([cand('younger', '1.34.0', '1.35.0'), older])?.name, 'older');
    assert.equal(pickLeader([cand('bad', 'x', '1.35.0')]), undefined, 'unparseable versions are not eligible');
    assert.equal(pickLeader([cand('short', '1.34', '1.35'), cand('long', '1.35.0', '1.35.0')])?.name, 'short', 'versions are parsed tolerantly');
  });

  it('takes the strategy of the highest binary version, and refuses two strategies at the same one', () => {
    assert.equal(pickStrategy([cand('a', '1.34.0', '1.34.0', { strategy: 'example.com/mine' }), cand('b', '1.34.0', '1.35.0')]), 'OldestEmulationVersion');
    const conflict = pickStrategy([cand('a', '1.34.0', '1.35.0', { strategy: 'example.com/mine' }), cand('b', '1.34.0', '1.35.0')]);
    assert.ok(conflict instanceof Error);
    assert.match(conflict.message, /same binary version but received differing strategies/);
  });

  it('needs an election without a lease, with an expired one, or with a better candidate than the holder', () => {
    const a = cand('a', '1.34.0', '1.35.0');
    const b = cand('b', '1.35.0', '1.35.0');
    assert.equal(electionNeeded([a, b], undefined, NOW), true);
    const live = { holderIdentity: 'a', renewTime: NOW - 1000, leaseDurationSeconds: 5 };
    assert.equal(electionNeeded([a, b], live, NOW), false);
    assert.equal(electionNeeded([a, b], { ...live, renewTime: NOW - 6000 }, NOW), true, 'expired');
    assert.equal(electionNeeded([a, b], { ...live, holderIdentity: 'b' }, NOW), true, 'a is better than the holder');
  });

  it('pings candidates not renewed lately, waits for answers, and elects among those that answered', () => {
    const fresh = cand('fresh', '1.35.0', '1.35.0');
    const quiet = cand('quiet', '1.34.0', '1.35.0', { renewTime: NOW - 60_000 });
    assert.deepEqual(electionStep([fresh, quiet], NOW), { kind: 'ping', names: ['quiet'] });
    const pinged = { ...quiet, pingTime: NOW - 1000 };
    assert.deepEqual(electionStep([fresh, pinged], NOW), { kind: 'wait' });
    const answered = { ...pinged, renewTime: NOW - 500 };
    assert.deepEqual(electionStep([fresh, answered], NOW), { kind: 'elect', strategy: 'OldestEmulationVersion', holder: 'quiet' });
    const silent = { ...quiet, pingTime: NOW - 6000 };
    assert.deepEqual(electionStep([{ ...fresh, renewTime: NOW - 100 }, silent], NOW), { kind: 'elect', strategy: 'OldestEmulationVersion', holder: 'fresh' }, 'a ping unanswered for 5 s excludes the candidate');
  });
});

describe('semantic versions and LeaseCandidate validation', () => {
  it('parses strictly for validation and tolerantly for the election', () => {
    assert.equal(parseSemver('1.35'), undefined);
    assert.equal(parseSemver('v1.35.0'), undefined);
    assert.deepEqual(parseSemverTolerant('v1.35'), { major: 1, minor: 35, patch: 0, pre: [] });
    assert.equal(compareSemver(parseSemver('1.35.0-alpha.1')!, parseSemver('1.35.0')!), -1);
    assert.equal(compareSemver(parseSemver('1.35.0-alpha.2')!, parseSemver('1.35.0-alpha.10')!), -1);
  });

  it('reports upstream field errors', () => {
    const errs = validateLeaseCandidate({ metadata: { name: 'x' }, spec: { leaseName: 'l', binaryVersion: '1.34.0', emulationVersion: '1.35.0', strategy: 'OldestEmulationVersion' } });
    assert.deepEqual(errs.map((e) => `${e.type} ${e.field}`), ['FieldValueInvalid spec.binaryVersion']);
    const missing = validateLeaseCandidate({ metadata: { name: 'x' }, spec: { strategy: 'Newest' } });
    assert.deepEqual(missing.map((e) => `${e.type} ${e.field}`), ['FieldValueRequired spec.leaseName', 'FieldValueRequired spec.binaryVersion', 'FieldValueNotSupported spec.strategy.strategy']);
  });
});
