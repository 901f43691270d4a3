import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import { benchCredentials } from './bench-support.js';

/**
 * Starts the bare Node TLS fan-out server (bench/raw-fanout-server.ts, its
 * own process, as the API server is) writing events of `eventBytes` when
 * told a sequence number over IPC; resolves with the child and its port.
 */
export async function startRawFanoutServer(eventBytes: number): Promise<{ child: ChildProcess; port: number }> {
  const { pki } = await benchCredentials();
  const init = { key: pki.serving.keyPem, cert: pki.serving.certPem, ca: pki.clientCaPem, eventBytes };
  const child = fork(path.resolve('dist/bench/raw-fanout-server.js'), [], { env: { ...process.env, RAW_FANOUT_INIT: JSON.stringify(init) }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`the raw fan-out server exited (${code})`)));
  });
  return { child, port };
}
