import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { adminIdentity, type ClientIdentity } from './credentials.js';

/** The outcome of one kubectl run. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

/**
 * Writes a kubeconfig for `server` into a fresh temp folder and returns its
 * path: the test CA as `certificate-authority-data` and `id`'s credentials
 * (by default the platform administrator's client certificate).
 */
export function writeTestKubeconfig(server: string, id: ClientIdentity = adminIdentity()): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'plinth-kubectl-'));
  const file = path.join(dir, 'kubeconfig');
  const user: Record<string, string> = {};
  if (id.certPem && id.keyPem) {
    user['client-certificate-data'] = b64(id.certPem);
    user['client-key-data'] = b64(id.keyPem);
  }
  if (id.token) user.token = id.token;
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 't', cluster: { server, 'certificate-authority-data': b64(id.caPem) } }],
    contexts: [{ name: 't', context: { cluster: 't', user: 't' } }],
    'current-context': 't',
    users: [{ name: 't', user }],
  };
  writeFileSync(file, stringify(config), { mode: 0o600 });
  return file;
}

/** Runs the real kubectl binary with `args` against `kubeconfig`; never rejects. */
export function kubectl(kubeconfig: string, args: string[], input?: string, timeoutMs = 30000): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', kubeconfig, '--cache-dir', path.join(path.dirname(kubeconfig), 'cache'), ...args],
      { timeout: timeoutMs, env: { ...process.env, KUBECONFIG: kubeconfig, HOME: path.dirname(kubeconfig) } },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    if (input !== undefined) {
      child.stdin?.write(input);
      child.stdin?.end();
    }
  });
}
