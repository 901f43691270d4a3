import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { defaultKeyStoreUrl, TenantKeyStore } from '@plinth/storage';
import { freePort } from '../watch/support/cluster.js';

/** A loopback TCP port forwarded to the test PostgreSQL's Unix socket (which serves no TCP), until `close()`. */
async function tcpToSocket(socketPath: string): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((client) => {
    const upstream = net.connect(socketPath);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    port: (srv.address() as net.AddressInfo).port,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => srv.close(() => r()));
    },
  };
}

// Issue 41: the KMS key store's own URL (PLINTH_KEY_STORE_URL, or the one beside DATABASE_URL) may name several hosts,
// as the object database's may: libpq's order, target_session_attrs.
describe('the tenants key store on a URL naming several hosts', () => {
  const admin = new URL(process.env.PLINTH_TEST_PG_ADMIN_URL!);
  const name = `keys_hosts_${randomBytes(3).toString('hex')}`;
  let forward: { port: number; close: () => Promise<void> };
  let dead: number;
  const hosts = () => `127.0.0.1:${dead},127.0.0.1:${forward.port}`;
  const credentials = `${admin.username}:${admin.password}`;

  before(async () => {
    forward = await tcpToSocket(path.join(admin.searchParams.get('host')!, `.s.PGSQL.${admin.searchParams.get('port')}`));
    dead = await freePort();
  });
  after(async () => {
    const c = new pg.Client({ connectionString: admin.toString() });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.end();
    await forward?.close();
  });

  it('is created and used through the host that answers (the first refuses)', async () => {
    const url = `postgres://${credentials}@${hosts()}/${name}?target_session_attrs=read-write`;
    const adminUrl = `postgres://${credentials}@${hosts()}/postgres?target_session_attrs=read-write`;
    const store = await TenantKeyStore.open(url, adminUrl);
    try {
      const key = await store.add({ tenant: 'alpha', keyId: 'k1', wrapped: Buffer.from('wrapped'), annotations: { a: Buffer.from('b') } });
      assert.deepEqual(await store.current('alpha', 'k1'), key);
      assert.equal((await store.byRef(key.ref))?.wrapped.toString(), 'wrapped');
      assert.equal(await store.destroyTenant('alpha'), 1);
      assert.equal(await store.count('alpha'), 0);
    } finally {
      await store.close();
    }
  });

  it('beside an object database on several hosts: the same hosts and options, the name with _keys', () => {
    assert.equal(
      defaultKeyStoreUrl(`postgres://u:p@h1:5432,h2:5433/plinth?target_session_attrs=read-write&sslmode=disable`),
      'postgres://u:p@h1:5432,h2:5433/plinth_keys?target_session_attrs=read-write&sslmode=disable',
    );
    assert.equal(defaultKeyStoreUrl('postgres://u:p@h1:5432/plinth'), 'postgres://u:p@h1:5432/plinth_keys');
  });

  it('says which hosts refused, never the password', async () => {
    const url = `postgres://${admin.username}:not-the-password@${hosts()}/${name}?target_session_attrs=read-write`;
    await assert.rejects(TenantKeyStore.open(url, url), (err: Error) => {
      assert.ok(!err.message.includes('not-the-password'), err.message);
      assert.match(err.message, new RegExp(`key store ${admin.username}@127\\.0\\.0\\.1:${dead},127\\.0\\.0\\.1:${forward.port}/${name}: `));
      assert.match(err.message, /password authentication failed/);
      return true;
    });
  });
});
