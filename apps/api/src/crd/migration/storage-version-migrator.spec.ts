import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Logger } from 'pino';
import type { CrdObject } from '../../kinds/customresourcedefinition/crd-types.js';
import { StorageVersionMigrator, type StorageVersionMigratorDeps } from './storage-version-migrator.js';

/** A CRD established with `storage` as its storage version, at `generation`, with `stored` as status.storedVersions. */
function crd(uid: string, generation: number, storage: 'v1' | 'v2', stored: string[]): CrdObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `things-${uid}.example.com`, uid, generation },
    spec: { group: 'example.com', versions: [{ name: 'v1', served: true, storage: storage === 'v1' }, { name: 'v2', served: true, storage: storage === 'v2' }] },
    status: { storedVersions: stored, conditions: [{ type: 'Established', status: 'True' }] },
  };
}

/** A migrator whose submissions are recorded (nothing else of its dependencies is used by check). */
function recordingMigrator(): { migrator: StorageVersionMigrator; submitted: string[] } {
  const submitted: string[] = [];
  const deps = { submit: async (tenant: string) => void submitted.push(tenant), logger: {} as Logger } as unknown as StorageVersionMigratorDeps;
  return { migrator: new StorageVersionMigrator(deps), submitted };
}

describe('StorageVersionMigrator.check', () => {
  it('submits a run on every storage version switch, v1 -> v2 -> v1 -> v2, each seen once', () => {
    const { migrator, submitted } = recordingMigrator();
    migrator.check('acme', [crd('a', 1, 'v1', ['v1'])]);
    migrator.check('acme', [crd('a', 2, 'v2', ['v1', 'v2'])]);
    migrator.check('acme', [crd('a', 2, 'v2', ['v1', 'v2'])]);
    migrator.check('acme', [crd('a', 2, 'v2', ['v2'])]);
    migrator.check('acme', [crd('a', 3, 'v1', ['v2', 'v1'])]);
    migrator.check('acme', [crd('a', 3, 'v1', ['v1'])]);
    migrator.check('acme', [crd('a', 4, 'v2', ['v1', 'v2'])]);
    assert.deepEqual(submitted, ['acme', 'acme', 'acme']);
  });

  it('submits the next switch even when the end of the last migration was never seen (changes coalesced)', () => {
    const { migrator, submitted } = recordingMigrator();
    migrator.check('acme', [crd('a', 2, 'v2', ['v1', 'v2'])]);
    migrator.check('acme', [crd('a', 3, 'v1', ['v2', 'v1'])]);
    migrator.check('acme', [crd('a', 4, 'v2', ['v1', 'v2'])]);
    assert.deepEqual(submitted, ['acme', 'acme', 'acme']);
  });

  it('forgets a CRD that is gone: the same state seen again is submitted again, and tenants are apart', () => {
    const { migrator, submitted } = recordingMigrator();
    migrator.check('acme', [crd('a', 2, 'v2', ['v1', 'v2'])]);
    migrator.check('acme', []);
    migrator.check('acme', [crd('a', 2, 'v2', ['v1', 'v2'])]);
    migrator.check('other', [crd('a', 2, 'v2', ['v1', 'v2'])]);
    assert.deepEqual(submitted, ['acme', 'acme', 'other']);
  });
});
