import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { ChangeLogRepository, ObjectStoreRepository } from '@plinth/storage';
import { clusterRoleResource } from '../../apps/api/src/kinds/rbac/rbac.resources.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const AGGREGATED = ['admin', 'edit', 'view'];

// A new tenant's aggregated default roles are written once, already complete, rather than created empty and then
// filled in by the aggregation pass (half the writes, half the change history of a tenant's provisioning).
describe('default ClusterRoles of a new tenant', () => {
  let s: TestServer;

  before(async () => {
    s = await startTestServer('default_roles');
  });
  after(async () => s?.close());

  it('creates admin, edit and view with their aggregated rules and never updates them afterwards', async () => {
    const from = await s.app.get(ObjectStoreRepository).currentRevision();
    await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'fresh' } }).expect(201);
    // Every pass of the aggregator this creation may schedule has had its chance to write.
    await new Promise((r) => setTimeout(r, 1000));
    const rules = new Map<string, number>();
    for (const name of AGGREGATED) {
      const role = await request(s.url).get(`/clusters/fresh/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}`).expect(200);
      rules.set(name, role.body.rules.length);
    }
    // Aggregation nests: view's rules are in edit, edit's in admin.
    assert.ok(rules.get('view')! > 0 && rules.get('edit')! > rules.get('view')! && rules.get('admin')! > rules.get('edit')!, JSON.stringify([...rules]));
    const { events } = await s.app.get(ChangeLogRepository).changesInScope(from, 1000, { tenant: 'fresh', resource: clusterRoleResource.storageResource });
    const ofAggregated = events.filter((e) => AGGREGATED.includes(e.key.name));
    assert.deepEqual(ofAggregated.map((e) => `${e.type} ${e.key.name}`).sort(), AGGREGATED.map((n) => `ADDED ${n}`));
    for (const e of ofAggregated) assert.equal((e.object.rules as unknown[]).length, rules.get(e.key.name), e.key.name);
  });
});
