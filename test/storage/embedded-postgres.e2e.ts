import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '@plinth/storage';
import { freePort } from '../watch/support/cluster.js';

/** Resolves with the error code of a TCP connection to `host:port`, or 'connected' when something accepted it. */
function tcpOutcome(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    sock.once('connect', () => {
      sock.destroy();
      resolve('connected');
    });
    sock.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? String(err)));
  });
}

// The embedded server holds a superuser whose password sits in the URL: only its owner may reach it.
describe('embedded PostgreSQL', { timeout: 120_000 }, () => {
  let dir: string;
  let port: number;
  let db: EmbeddedDatabase | undefined;

  before(async () => {
    dir = mkdtempSync(path.join(process.env.PLINTH_TEST_TMP ?? os.tmpdir(), 'pg-embedded-'));
    // PostgreSQL runs as its own user when the tests run as root: it must reach its data folder.
    chmodSync(dir, 0o755);
    port = await freePort();
    // Started as `npm start` starts it: no extra settings (the runner's installed PostgreSQL when PLINTH_TEST_PG_BIN names one).
    db = await startEmbeddedPostgres({ dataDir: dir, port, database: 'plinth', binDir: process.env.PLINTH_TEST_PG_BIN || undefined });
  });
  after(async () => {
    await db?.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses TCP connections on its port, on IPv4 and IPv6 loopback', async () => {
    assert.equal(await tcpOutcome('127.0.0.1', port), 'ECONNREFUSED');
    assert.notEqual(await tcpOutcome('::1', port), 'connected');
  });

  it('serves its URL over a Unix socket only its owner may use', async () => {
    const url = new URL(db!.url);
    const socketDir = url.searchParams.get('host') ?? '';
    assert.ok(path.isAbsolute(socketDir), `the URL names a socket folder: ${db!.url}`);
    assert.equal(statSync(path.join(socketDir, `.s.PGSQL.${port}`)).mode & 0o777, 0o700);
    const client = new pg.Client({ connectionString: db!.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ db: string; listen: string }>(`SELECT current_database() AS db, current_setting('listen_addresses') AS listen`);
      assert.deepEqual(rows[0], { db: 'plinth', listen: '' });
    } finally {
      await client.end();
    }
  });
});
