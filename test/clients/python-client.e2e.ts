import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { tokenIdentity } from '../support/credentials.js';
import { writeTestKubeconfig } from '../support/kubectl.js';
import { grantInNamespace } from '../support/rbac.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { ROOT_CA_CONFIGMAP } from '../support/root-ca.js';

/** The script lives in the source tree (not compiled): test/fixtures/python. */
const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/python/client_check.py');

function python(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // Debian's interpreter: python3-kubernetes is installed for it (.ci/run).
    execFile('/usr/bin/python3', [SCRIPT, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? 1 : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

// The official Python client (kubernetes 22.6, Debian's python3-kubernetes) over HTTPS: client certificate and ServiceAccount token.
describe('the Kubernetes Python client', { timeout: 120_000 }, () => {
  let s: TestServer;

  before(async () => {
    s = await startTestServer('python-client');
    await request(s.url).post('/api/v1/namespaces').send({ metadata: { name: 'py' } }).expect(201);
    await request(s.url).post('/api/v1/namespaces/py/serviceaccounts').send({ metadata: { name: 'reader' } }).expect(201);
    await grantInNamespace(s.url, 'py', 'reader-view', 'view', [{ kind: 'ServiceAccount', name: 'reader', namespace: 'py' }]);
  });
  after(async () => s?.close());

  it('lists, creates, patches, watches and applies server-side with a client certificate, and is held to RBAC with a token', async () => {
    const token = (await request(s.url).post('/api/v1/namespaces/py/serviceaccounts/reader/token').send({ spec: {} }).expect(201)).body.status.token as string;
    const run = await python([writeTestKubeconfig(s.url), writeTestKubeconfig(s.url, tokenIdentity(token))]);
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout);
    assert.ok(out.namespaces.includes('py') && out.namespaces.includes('default'), String(out.namespaces));
    assert.match(out.created_rv, /^\d+$/);
    assert.deepEqual(out.watch, [['MODIFIED', 'from-python', { a: '2' }]]);
    assert.equal(out.conflict, 409);
    assert.deepEqual(out.ssa_managers, [['py-first', 'Apply']]);
    assert.equal(out.ssa_conflict, 409);
    assert.deepEqual(out.ssa_forced, ['second', ['py-second']]);
    assert.deepEqual(out.sa_list_in_py, ['applied', 'from-python', ROOT_CA_CONFIGMAP]);
    assert.equal(out.sa_list_namespaces, 403);
    assert.equal(out.sa_create, 403);
  });
});
