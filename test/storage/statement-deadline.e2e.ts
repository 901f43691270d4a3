import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createDatabase, type Database, isDatabaseUnavailable, ServerProbe } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

/**
 * A TCP proxy to PostgreSQL that can be frozen: it keeps every connection
 * open and accepts new ones, but forwards nothing either way, as a server
 * under SIGSTOP (or behind a partition) behaves.
 */
class FreezableProxy {
  frozen = false;
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(target: net.NetConnectOpts) {
    this.server = net.createServer((client) => {
      const upstream = net.connect(target);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => this.sockets.delete(s));
      }
      client.on('data', (d) => void (this.frozen || upstream.write(d)));
      upstream.on('data', (d) => void (this.frozen || client.write(d)));
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}

describe('a server that stops answering (statement deadline, probe)', { timeout: 30_000 }, () => {
  let database: TestDatabase;
  let proxy: FreezableProxy;
  let db: Database;
  let url: string;

  before(async () => {
    database = await createTestDatabase('statement_deadline');
    const u = new URL(database.url);
    // The test server may listen on a Unix socket only (?host=folder): the proxy takes TCP to either.
    const socketDir = u.searchParams.get('host');
    const port = u.searchParams.get('port') ?? (u.port || '5432');
    proxy = new FreezableProxy(socketDir ? { path: `${socketDir}/.s.PGSQL.${port}` } : { host: u.hostname, port: Number(port) });
    await proxy.listen();
    u.searchParams.delete('host');
    u.searchParams.delete('port');
    u.hostname = '127.0.0.1';
    u.port = String(proxy.port);
    url = u.toString();
    db = createDatabase({ connectionString: url, maxConnections: 2, statementDeadline: { afterMs: 500, checkTimeoutMs: 500 } });
  });

  after(async () => {
    proxy.frozen = false;
    await db?.destroy().catch(() => undefined);
    await proxy?.close();
    await database?.drop();
  });

  it('fails a statement in flight on a frozen server within the deadline and the check, as unavailable (a 503)', async () => {
    await sql`SELECT 1`.execute(db);
    proxy.frozen = true;
    const started = Date.now();
    const outcome = await sql`SELECT 1`.execute(db).then(
      () => 'answered',
      (err: Error) => err,
    );
    const waited = Date.now() - started;
    assert.notEqual(outcome, 'answered');
    assert.ok(isDatabaseUnavailable(outcome), `unavailable, not ${String(outcome)}`);
    assert.ok(waited < 3000, `failed after ${waited} ms`);
    proxy.frozen = false;
    // The pool dropped the abandoned session and connects again.
    const { rows } = await sql<{ v: number }>`SELECT 7 AS v`.execute(db);
    assert.equal(rows[0].v, 7);
  });

  it('keeps a slow statement on a server that answers', async () => {
    const { rows } = await sql<{ v: number }>`SELECT 3 AS v FROM pg_sleep(1.6)`.execute(db);
    assert.equal(rows[0].v, 3);
  });

  it('probes on a session of its own: a frozen server fails the probe within its timeout, and it reconnects after', async () => {
    const probe = new ServerProbe(url, 500);
    await probe.check();
    proxy.frozen = true;
    const started = Date.now();
    await assert.rejects(probe.check(), /no answer within 500 ms/);
    assert.ok(Date.now() - started < 1500);
    proxy.frozen = false;
    await probe.check();
    probe.close();
  });
});
