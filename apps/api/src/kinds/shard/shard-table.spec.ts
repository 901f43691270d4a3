import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Quantity, type KubeObject } from '@plinth/apimachinery';
import { humanBytes, readyCell, shardTable } from './shard-table.js';

describe('humanBytes', () => {
  it('shows bytes below 1024 as the plain number', () => {
    assert.equal(humanBytes(0), '0');
    assert.equal(humanBytes(512), '512');
    assert.equal(humanBytes(1023), '1023');
  });

  it('uses the largest binary suffix under 1024, one decimal below 10, none from 10 on', () => {
    assert.equal(humanBytes(1024), '1Ki');
    assert.equal(humanBytes(1536), '1.5Ki');
    assert.equal(humanBytes(1258291), '1.2Mi');
    assert.equal(humanBytes(12 * 1024 * 1024), '12Mi');
    assert.equal(humanBytes(512 * 1024 ** 3), '512Gi');
    assert.equal(humanBytes(3 * 1024 ** 4), '3Ti');
  });

  it('rounds before choosing the suffix, so a value just under a unit shows as the next unit', () => {
    assert.equal(humanBytes(1024 * 1024 - 1), '1Mi');
    assert.equal(humanBytes(10 * 1024 - 10), '10Ki');
  });

  it('gives valid quantities close to the value', () => {
    for (const n of [0, 1, 1000, 4097, 99_999, 7_654_321, 2 ** 40 + 12345]) {
      const q = Quantity.parse(humanBytes(n)).asApproximateFloat();
      assert.ok(Math.abs(q - n) <= n * 0.05, `${n} -> ${humanBytes(n)}`);
    }
  });
});

function shard(status?: unknown): KubeObject {
  return { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Shard', metadata: { name: 'east', creationTimestamp: '2026-11-27T10:00:00Z' }, ...(status ? { status } : {}) };
}

describe('shardTable', () => {
  const now = new Date('2026-11-27T10:05:00Z');

  it('has the columns NAME, READY, TENANTS, OBJECTS, SIZE, AGE, and HOST and SURVIVES-PRIMARY-LOSS only with -o wide', () => {
    assert.deepEqual(
      shardTable.columns.map((c) => `${c.name}:${c.priority}`),
      ['Name:0', 'Ready:0', 'Tenants:0', 'Objects:0', 'Size:0', 'Age:0', 'Host:1', 'Survives-Primary-Loss:1'],
    );
  });

  it('fills the cells from status', () => {
    const ready = { type: 'Ready', status: 'False', reason: 'Unreachable', message: 'db1:5432: connection refused', lastTransitionTime: '2026-11-27T10:00:00Z' };
    const o = shard({ conditions: [{ type: 'Other', status: 'True' }, ready, { type: 'SurvivesPrimaryLoss', status: 'False' }], tenants: 3, objects: 42, bytes: 1258291, host: 'db1:5432/plinth' });
    assert.deepEqual(shardTable.cells(o, now), ['east', 'False', 3, 42, '1.2Mi', '5m', 'db1:5432/plinth', 'False']);
  });

  it('shows Unknown readiness and no counts before the platform reported them', () => {
    assert.deepEqual(shardTable.cells(shard(), now), ['east', 'Unknown', null, null, null, '5m', null, 'Unknown']);
    assert.equal(readyCell(shard({ conditions: 'x' })), 'Unknown');
  });
});
