import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The outcome of one kubectl run. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Writes a kubeconfig for `server` into a fresh temp folder and returns its path. */
export function writeTestKubeconfig(server: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'plinth-kubectl-'));
  const file = path.join(dir, 'kubeconfig');
  writeFileSync(
    file,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: t\n  cluster:\n    server: ${server}\ncontexts:\n- name: t\n  context:\n    cluster: t\n    user: t\ncurrent-context: t\nusers:\n- name: t\n  user: {}\n`,
  );
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
