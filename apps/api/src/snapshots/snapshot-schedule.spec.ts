import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TenantObject } from '../kinds/tenant/tenant-api.js';
import { cronProblem } from '../kinds/tenant/tenant.validation.js';
import { nextRun, planOf } from './snapshot-schedule.js';
import { isScheduledName, oldestFirst, scheduledSnapshotName, timeOfName } from './snapshot-target.js';

const tenant = (snapshots?: NonNullable<TenantObject['spec']>['snapshots']): TenantObject => ({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'acme' }, spec: { snapshots } });
const platform = { schedule: '0 3 * * *', keep: 7, recipients: ['age1platform'] };

describe('snapshot schedules', () => {
  it('takes the tenant\'s own schedule, keep and recipients over the platform\'s, field by field', () => {
    assert.deepEqual(planOf(tenant(), platform), { schedule: '0 3 * * *', keep: 7, recipients: ['age1platform'] });
    assert.deepEqual(planOf(tenant({ schedule: '*/5 * * * *', keep: 2 }), platform), { schedule: '*/5 * * * *', keep: 2, recipients: ['age1platform'] });
    assert.deepEqual(planOf(tenant({ recipients: ['age1own'] }), platform)?.recipients, ['age1own']);
  });

  it('has no plan when suspended, or when neither the tenant nor the platform has a schedule', () => {
    assert.equal(planOf(tenant({ suspend: true, schedule: '* * * * *' }), platform), undefined);
    assert.equal(planOf(tenant({ keep: 3 }), { keep: 7, recipients: [] }), undefined);
  });

  it('computes the next time in UTC, with or without a seconds field', () => {
    assert.equal(nextRun('15 */6 * * *', new Date('2026-12-02T10:00:00Z'))?.toISOString(), '2026-12-02T12:15:00.000Z');
    assert.equal(nextRun('*/2 * * * * *', new Date('2026-12-02T10:00:00.500Z'))?.toISOString(), '2026-12-02T10:00:02.000Z');
    assert.equal(nextRun('not cron', new Date()), undefined);
  });

  it('validates cron expressions: 5 or 6 fields, values in range', () => {
    assert.equal(cronProblem('0 3 * * *'), undefined);
    assert.equal(cronProblem('*/10 * * * * *'), undefined);
    assert.match(cronProblem('* * * *')!, /5 fields/);
    assert.match(cronProblem('61 * * * *')!, /not a cron expression/);
    assert.match(cronProblem('every minute')!, /cron/);
  });

  it('names scheduled snapshots by tenant, time and revision, so that names sort by time; other files are not scheduled ones', () => {
    const name = scheduledSnapshotName('acme', new Date('2026-12-02T10:15:00.123Z'), 593);
    assert.equal(name, 'acme/acme-20261202T101500.123Z-r593.snapshot');
    const file = name.split('/')[1]!;
    assert.ok(isScheduledName('acme', file));
    assert.ok(!isScheduledName('acme-copy', file), 'another tenant\'s prefix');
    assert.ok(!isScheduledName('acme', 'acme-by-hand.snapshot'));
    assert.equal(timeOfName(file), '2026-12-02T10:15:00.123Z');
    const entries = [
      { location: 'acme/b', bytes: 1, time: '2026-12-02T10:00:02.000Z', scheduled: true },
      { location: 'acme/a', bytes: 1, time: '2026-12-02T10:00:01.000Z', scheduled: true },
    ];
    assert.deepEqual(oldestFirst(entries).map((e) => e.location), ['acme/a', 'acme/b']);
    assert.equal(entries[0]!.location, 'acme/b', 'the input is not reordered');
  });
});
