import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { eventually } from '../support/eventually.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startTestServerOn, type TestServer } from '../support/test-server.js';
import { configFile, KEY1, KEY2, query, rotationState } from '../encryption/rotation-support.js';

const SVM = '/apis/storagemigration.k8s.io/v1beta1/storageversionmigrations';
const MAP = '/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies';
const MAP_RESOURCE = 'admissionregistration.k8s.io/mutatingadmissionpolicies';
const CONFIGMAPS = 40;

/** An EncryptionConfiguration for configmaps with these aescbc keys, in order. */
function configMapKeys(keys: Array<[string, string]>): string {
  return `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [configmaps]
    providers:
      - aescbc:
          keys:
${keys.map(([name, secret]) => `            - name: ${name}\n              secret: ${secret}`).join('\n')}
      - identity: {}
`;
}

function migration(name: string, group: string, resource: string): Record<string, unknown> {
  return { apiVersion: 'storagemigration.k8s.io/v1beta1', kind: 'StorageVersionMigration', metadata: { name }, spec: { resource: { group, resource } } };
}

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
}

/** Waits for the migration's Succeeded condition; returns the migration. */
async function succeeded(url: string, name: string): Promise<{ status: { conditions: Condition[]; resourceVersion: string } }> {
  return eventually(
    async () => {
      const got = (await request(url).get(`${SVM}/${name}`).expect(200)).body;
      const c = (got.status?.conditions ?? []) as Condition[];
      assert.ok(c.some((x) => x.type === 'Succeeded' && x.status === 'True'), JSON.stringify(got.status));
      return got;
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
}

/** The `k8s:enc` prefix (provider and key) of each stored ConfigMap of namespace `data`. */
async function configMapKeysInRows(url: string): Promise<Record<string, number>> {
  const rows = await query<{ enc: string | null }>(url, "SELECT body ->> 'k8s:enc' AS enc FROM objects WHERE resource = 'configmaps' AND namespace = 'data'");
  const out: Record<string, number> = {};
  for (const r of rows) {
    const key = (r.enc ?? 'plain').split(':').slice(0, 5).join(':');
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

describe('StorageVersionMigration (storagemigration.k8s.io/v1beta1, beta in 1.35)', () => {
  let tdb: TestDatabase;
  let s: TestServer;
  const encryption = configFile(configMapKeys([['key1', KEY1]]));
  const env = {
    PLINTH_ENCRYPTION_PROVIDER_CONFIG: encryption.file,
    // The rotation job waits one reload interval after a new configuration: an hour, so the migration is what rewrites the rows.
    PLINTH_ENCRYPTION_PROVIDER_CONFIG_AUTOMATIC_RELOAD: 'true',
    PLINTH_ENCRYPTION_PROVIDER_CONFIG_RELOAD_INTERVAL_SECONDS: '3600',
    PLINTH_FEATURE_GATES: 'StorageVersionMigrator=true,MutatingAdmissionPolicy=true',
    PLINTH_RUNTIME_CONFIG: 'storagemigration.k8s.io/v1beta1=true,admissionregistration.k8s.io/v1beta1=true,admissionregistration.k8s.io/v1alpha1=true',
  };

  before(async () => {
    tdb = await createTestDatabase('storage-version-migration');
    s = await startTestServerOn(tdb, env);
    await request(s.url).post('/api/v1/namespaces').send({ metadata: { name: 'data' } }).expect(201);
    for (let i = 0; i < CONFIGMAPS; i++) await request(s.url).post('/api/v1/namespaces/data/configmaps').send({ metadata: { name: `cm-${i}` }, data: { v: `value-${i}` } }).expect(201);
    for (const name of ['p1', 'p2', 'p3']) {
      await request(s.url)
        .post(MAP)
        .send({
          apiVersion: 'admissionregistration.k8s.io/v1beta1',
          kind: 'MutatingAdmissionPolicy',
          metadata: { name },
          spec: {
            reinvocationPolicy: 'Never',
            matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['secrets'] }] },
            mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{}' } }],
          },
        })
        .expect(201);
    }
    await s.close();
    // As data written before v1beta1 became the storage version: the policies' rows say v1alpha1.
    await query(tdb.url, `UPDATE objects SET body = jsonb_set(body, '{apiVersion}', '"admissionregistration.k8s.io/v1alpha1"') WHERE resource = '${MAP_RESOURCE}'`);
    // A new first key (upstream's step 2 of key rotation); the migration is step 3.
    encryption.write(configMapKeys([['key2', KEY2], ['key1', KEY1]]));
    s = await startTestServerOn(tdb, env);
  });
  after(async () => {
    await s?.close();
    await tdb?.drop();
  });

  it('validates as upstream: spec.resource.resource required, spec.resource immutable, the status conditions consistent', async () => {
    const api = request(s.url);
    const missing = await api.post(SVM).send(migration('bad', 'apps', '')).expect(422);
    assert.deepEqual(missing.body.details.causes, [{ reason: 'FieldValueRequired', field: 'spec.resource.resource', message: 'Required value: resource is required' }]);
    await api.post(SVM).send(migration('unknown', 'example.com', 'nothings')).expect(201);
    const got = (await api.get(`${SVM}/unknown`).expect(200)).body;
    const changed = await api.put(`${SVM}/unknown`).send({ ...got, spec: { resource: { group: 'example.com', resource: 'others' } } }).expect(422);
    assert.equal(changed.body.details.causes[0].field, 'spec.resource.resource');
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const both = await api
      .put(`${SVM}/unknown/status`)
      .send({
        ...got,
        status: {
          conditions: [
            { type: 'Succeeded', status: 'True', reason: 'Done', message: '', lastTransitionTime: now },
            { type: 'Failed', status: 'True', reason: 'Done', message: '', lastTransitionTime: now },
          ],
        },
      })
      .expect(422);
    assert.match(both.body.message, /Both success and failed conditions cannot be true at the same time/);
    await api.delete(`${SVM}/unknown`).expect(200);
  });

  it('rewrites the objects stored in an older version into the storage version, then reports Succeeded with upstream reasons', async () => {
    const before = await query<{ v: string; revision: string }>(tdb.url, `SELECT body->>'apiVersion' AS v, revision FROM objects WHERE resource = '${MAP_RESOURCE}' ORDER BY name`);
    assert.deepEqual(before.map((r) => r.v), Array(3).fill('admissionregistration.k8s.io/v1alpha1'));
    await request(s.url).post(SVM).send(migration('policies', 'admissionregistration.k8s.io', 'mutatingadmissionpolicies')).expect(201);
    const done = await succeeded(s.url, 'policies');
    const byType = Object.fromEntries(done.status.conditions.map((c) => [c.type, c]));
    assert.equal(byType.Running.status, 'False');
    assert.equal(byType.Running.reason, 'StorageVersionMigrationInProgress');
    assert.equal(byType.Succeeded.reason, 'StorageVersionMigrationSucceeded');
    assert.equal(byType.Succeeded.message, '3 of 3 objects rewritten');
    assert.match(done.status.resourceVersion, /^\d+$/);
    const rows = await query<{ v: string; revision: string }>(tdb.url, `SELECT body->>'apiVersion' AS v, revision FROM objects WHERE resource = '${MAP_RESOURCE}' ORDER BY name`);
    assert.deepEqual(rows.map((r) => r.v), Array(3).fill('admissionregistration.k8s.io/v1beta1'));
    rows.forEach((r, i) => assert.ok(Number(r.revision) > Number(before[i].revision), 'each row was written again'));
  });

  it('re-encrypts the objects written under an old key with the first key of the configuration', async () => {
    assert.deepEqual(await configMapKeysInRows(tdb.url), { 'k8s:enc:aescbc:v1:key1': CONFIGMAPS + 1 }, 'before: every ConfigMap of namespace data (and kube-root-ca.crt) is under key1');
    await request(s.url).post(SVM).send(migration('configmaps', '', 'configmaps')).expect(201);
    const done = await succeeded(s.url, 'configmaps');
    assert.deepEqual(await configMapKeysInRows(tdb.url), { 'k8s:enc:aescbc:v1:key2': CONFIGMAPS + 1 });
    const rotation = await rotationState(tdb.url);
    assert.ok((rotation?.rewritten ?? 0) < CONFIGMAPS, `the rotation job did not do it (${rotation?.rewritten} rewritten)`);
    const message = done.status.conditions.find((c) => c.type === 'Succeeded')!.message;
    assert.match(message, /^\d+ of \d+ objects rewritten$/);
    // The data reads back unchanged.
    const cm = (await request(s.url).get('/api/v1/namespaces/data/configmaps/cm-7').expect(200)).body;
    assert.deepEqual(cm.data, { v: 'value-7' });
  });

  it('kubectl lists the migrations with upstream columns (NAME, RESOURCE) and reads their conditions', async () => {
    const kubeconfig = writeTestKubeconfig(s.url);
    const table = await kubectl(kubeconfig, ['get', 'storageversionmigrations']);
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trim().split('\n');
    assert.match(lines[0], /^NAME\s+RESOURCE$/);
    assert.match(lines.find((l) => l.startsWith('policies')) ?? '', /^policies\s+mutatingadmissionpolicies\.admissionregistration\.k8s\.io$/);
    assert.match(lines.find((l) => l.startsWith('configmaps')) ?? '', /^configmaps\s+configmaps$/);
    const state = await kubectl(kubeconfig, ['get', 'storageversionmigration', 'policies', '-o', 'jsonpath={.status.conditions[?(@.type=="Succeeded")].status}']);
    assert.equal(state.stdout, 'True');
  });
});
