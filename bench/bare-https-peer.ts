import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import { type Agent, request } from 'undici';
import { benchCredentials, progress, runLoad } from './bench-support.js';
import { cpuDuring, type CpuSplit } from './process-cpu.js';

/** Starts bench/bare-https-server.ts as a child process; resolves with its port once it listens, rejects if it exits first. */
function startBareServer(child: ChildProcess): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the bare HTTPS server exited (${code})`)));
  });
}

/** Ends `child` (SIGTERM) and waits for it to exit; does nothing if it already has. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/**
 * The HTTPS floor of a create: `concurrency` loops of POSTs of `body(i)`
 * through `agent` (the API creates' own client) for `ms` to a bare
 * node:https server (bench/bare-https-server.ts, its own process, as the
 * API server is) that echoes the body with a resourceVersion added. Returns
 * the load's result and the CPU the bare server (as "server", PostgreSQL 0)
 * and this process spent. The child is ended however the phase ends.
 */
export async function bareHttpsPosts(agent: Agent, concurrency: number, ms: number, body: (i: number) => string): Promise<{ result: Awaited<ReturnType<typeof runLoad>>; cpu: CpuSplit }> {
  const { pki } = await benchCredentials();
  const init = { key: pki.serving.keyPem, cert: pki.serving.certPem, ca: pki.clientCaPem };
  const child = fork(path.resolve('dist/bench/bare-https-server.js'), [], { env: { ...process.env, BARE_HTTPS_INIT: JSON.stringify(init) }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  try {
    const base = `https://127.0.0.1:${await startBareServer(child)}`;
    const post = async (i: number) => {
      const res = await request(`${base}/api/v1/namespaces/bench/configmaps`, { method: 'POST', body: body(i), headers: { 'content-type': 'application/json' }, dispatcher: agent });
      const text = await res.body.text();
      if (res.statusCode !== 201) throw new Error(`bare HTTPS POST: ${res.statusCode} ${text.slice(0, 200)}`);
    };
    // A second of requests first, as the API creates have, so that the measured run finds the server's code compiled.
    await runLoad(concurrency, 1000, post);
    progress(`bare node:https server (echo, no database): ${concurrency} keep-alive clients for ${ms / 1000}s`);
    return await cpuDuring({ serverPid: child.pid! }, () => runLoad(concurrency, ms, post));
  } finally {
    await stopChild(child);
  }
}
