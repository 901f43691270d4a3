import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import { HostListConnector, parseHostList } from './host-list-connector.js';

describe('parseHostList', () => {
  it('splits a libpq URL naming several hosts, keeping credentials and options in each single-host URL', () => {
    const l = parseHostList('postgres://u:p%40ss@h1:5432,h2,[::1]:5434/db?target_session_attrs=read-write&sslmode=disable');
    assert.deepEqual(l.hosts, [
      { host: 'h1', port: 5432 },
      { host: 'h2', port: 5432 },
      { host: '::1', port: 5434 },
    ]);
    assert.equal(l.targetSessionAttrs, 'read-write');
    assert.equal(l.database, 'db');
    assert.equal(l.urlFor(1), 'postgres://u:p%40ss@h2:5432/db?sslmode=disable');
    assert.equal(l.urlFor(2), 'postgres://u:p%40ss@[::1]:5434/db?sslmode=disable');
    assert.equal(l.display, 'h1:5432,h2:5432,::1:5434/db');
    assert.ok(!l.display.includes('p%40ss'));
  });

  it('takes a one-host URL and a Unix socket URL as they are, and refuses an unknown target_session_attrs', () => {
    assert.equal(parseHostList('postgresql://u@localhost:6543/x').urlFor(0), 'postgresql://u@localhost:6543/x');
    const socket = parseHostList('postgres:///plinth?host=/tmp/pg&port=5433');
    assert.equal(socket.urlFor(0), 'postgres:///plinth?host=%2Ftmp%2Fpg&port=5433');
    assert.equal(socket.targetSessionAttrs, 'any');
    assert.throws(() => parseHostList('postgres://h1,h2/db?target_session_attrs=primaryish'), /invalid target_session_attrs/);
    assert.throws(() => parseHostList('http://h1/db'), /invalid PostgreSQL URL/);
  });
});

describe('HostListConnector', () => {
  it('names every host and why when none qualifies (refused connections), without the password', async () => {
    const ports = await Promise.all([0, 1].map(() => new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as net.AddressInfo;
        s.close(() => resolve(port));
      });
    })));
    const c = new HostListConnector(`postgres://u:secret@127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}/db?target_session_attrs=read-write`, { probeTimeoutMs: 500 });
    await assert.rejects(c.target(), (err: Error) => {
      assert.match(err.message, new RegExp(`no host of 127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}/db is usable for target_session_attrs=read-write`));
      assert.match(err.message, /ECONNREFUSED/);
      assert.ok(!err.message.includes('secret'));
      return true;
    });
  });
});
