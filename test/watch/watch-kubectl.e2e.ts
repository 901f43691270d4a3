import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { ROOT_CA_CONFIGMAP } from '../support/root-ca.js';
import { eventually } from '../support/eventually.js';

/** A long-running `kubectl get -w`, with its output collected line by line. */
class KubectlWatch {
  readonly lines: string[] = [];
  private partial = '';
  private constructor(readonly proc: ChildProcess) {
    proc.stdout!.setEncoding('utf8');
    proc.stdout!.on('data', (d: string) => {
      this.partial += d;
      const parts = this.partial.split('\n');
      this.partial = parts.pop()!;
      this.lines.push(...parts.map((l) => l.trimEnd()));
    });
  }

  static start(kubeconfig: string, args: string[]): KubectlWatch {
    const dir = path.dirname(kubeconfig);
    return new KubectlWatch(
      spawn('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', path.join(dir, 'cache'), ...args], {
        env: { ...process.env, KUBECONFIG: kubeconfig, HOME: dir },
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
  }

  /** The output lines split into columns. */
  rows(): string[][] {
    return this.lines.map((l) => l.split(/\s+/));
  }

  stop(): void {
    this.proc.kill('SIGTERM');
  }
}

describe('watch: kubectl get -w', { timeout: 120_000 }, () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;
  let kubeconfig: string;
  const running: KubectlWatch[] = [];

  before(async () => {
    s = await startTestServer('watch_kubectl');
    api = request(s.url);
    kubeconfig = writeTestKubeconfig(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'kw' } }).expect(201);
    await api.post('/api/v1/namespaces/kw/configmaps').send({ metadata: { name: 'pre' }, data: { a: '1' } }).expect(201);
  });
  after(async () => {
    for (const k of running) k.stop();
    await s.close();
  });

  it('prints the list, then each change as it happens (with --output-watch-events)', async () => {
    const k = KubectlWatch.start(kubeconfig, ['get', 'cm', '-n', 'kw', '-w', '--output-watch-events']);
    running.push(k);
    await eventually(() => k.lines.some((l) => /\bpre\b/.test(l)), { timeoutMs: 20_000, message: 'kubectl printed the list' });
    assert.deepEqual(k.rows()[0].slice(0, 4), ['EVENT', 'NAME', 'DATA', 'AGE']);
    // The namespace's ConfigMaps in name order: the kube-root-ca.crt every namespace holds (one key, ca.crt), then the test's.
    assert.deepEqual(k.rows()[1].slice(0, 3), ['ADDED', ROOT_CA_CONFIGMAP, '1']);
    assert.deepEqual(k.rows()[2].slice(0, 3), ['ADDED', 'pre', '1']);
    const a = await api.post('/api/v1/namespaces/kw/configmaps').send({ metadata: { name: 'a' }, data: { x: '1' } }).expect(201);
    await api.put('/api/v1/namespaces/kw/configmaps/a').send({ ...a.body, data: { x: '1', y: '2' } }).expect(200);
    await api.delete('/api/v1/namespaces/kw/configmaps/a').expect(200);
    await eventually(() => k.lines.length >= 6, { timeoutMs: 10_000, message: 'kubectl printed the three events' });
    assert.deepEqual(
      k.rows().slice(3, 6).map((r) => r.slice(0, 3)),
      [
        ['ADDED', 'a', '1'],
        ['MODIFIED', 'a', '2'],
        ['DELETED', 'a', '2'],
      ],
    );
  });

  it('watches one object by name, starting with its current state', async () => {
    const k = KubectlWatch.start(kubeconfig, ['get', 'cm', 'pre', '-n', 'kw', '-w']);
    running.push(k);
    await eventually(() => k.lines.length >= 2, { timeoutMs: 20_000, message: 'kubectl printed the object' });
    assert.deepEqual(k.rows()[0].slice(0, 3), ['NAME', 'DATA', 'AGE']);
    assert.deepEqual(k.rows()[1].slice(0, 2), ['pre', '1']);
    await api.post('/api/v1/namespaces/kw/configmaps').send({ metadata: { name: 'other' } }).expect(201);
    const cur = (await api.get('/api/v1/namespaces/kw/configmaps/pre').expect(200)).body;
    await api.put('/api/v1/namespaces/kw/configmaps/pre').send({ ...cur, data: { a: '1', b: '2' } }).expect(200);
    await eventually(() => k.lines.length >= 3, { timeoutMs: 10_000, message: 'kubectl printed the change' });
    assert.deepEqual(k.rows()[2].slice(0, 2), ['pre', '2']);
    assert.ok(!k.lines.some((l) => l.startsWith('other')), 'only the named object');
  });

  it('kubectl wait --for=delete returns once the object is deleted (list + watch by name)', async () => {
    await api.post('/api/v1/namespaces/kw/configmaps').send({ metadata: { name: 'doomed' } }).expect(201);
    const waiting = kubectl(kubeconfig, ['wait', '--for=delete', 'cm/doomed', '-n', 'kw', '--timeout=20s'], undefined, 30_000);
    await new Promise((r) => setTimeout(r, 1500));
    await api.delete('/api/v1/namespaces/kw/configmaps/doomed').expect(200);
    const res = await waiting;
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /configmap\/doomed condition met/);
  });
});
