import assert from 'node:assert/strict';
import { availableParallelism, hostname } from 'node:os';
import { describe, it } from 'node:test';
import { loadConfig } from './app-config.js';
import { chooseWorkers, databaseIsLocal, MAX_WORKERS } from './worker-count.js';

describe('the default worker count', () => {
  it('leaves a core to a PostgreSQL on the same host, never going below one worker', () => {
    const rule = (cpus: number, localDatabase: boolean) => chooseWorkers(undefined, { cpus, localDatabase });
    assert.deepEqual(rule(1, true), { workers: 1, reason: 'cpus' });
    assert.deepEqual(rule(2, true), { workers: 1, reason: 'cpus less one for a local PostgreSQL' });
    assert.deepEqual(rule(4, true), { workers: 3, reason: 'cpus less one for a local PostgreSQL' });
    assert.deepEqual(rule(1, false), { workers: 1, reason: 'cpus' });
    assert.deepEqual(rule(2, false), { workers: 2, reason: 'cpus' });
    assert.deepEqual(rule(8, false), { workers: 8, reason: 'cpus' });
    assert.equal(rule(200, true).workers, MAX_WORKERS);
    assert.equal(rule(200, false).workers, MAX_WORKERS);
  });

  it('lets an explicit PLINTH_WORKERS win over the rule', () => {
    assert.deepEqual(chooseWorkers(2, { cpus: 2, localDatabase: true }), { workers: 2, reason: 'PLINTH_WORKERS' });
    assert.deepEqual(chooseWorkers(1, { cpus: 16, localDatabase: false }), { workers: 1, reason: 'PLINTH_WORKERS' });
  });

  it('counts the embedded PostgreSQL, loopback, Unix sockets and this host as local, other hosts as remote', () => {
    assert.equal(databaseIsLocal(undefined), true, 'no DATABASE_URL: the embedded PostgreSQL');
    for (const url of [
      'postgres://plinth:pw@localhost/plinth',
      'postgres://plinth@127.0.0.1:5432/plinth',
      'postgresql://plinth@[::1]:5433/plinth',
      'postgres:///plinth?host=/var/run/postgresql',
      'postgres://plinth@%2Fvar%2Frun%2Fpostgresql/plinth',
      `postgres://plinth@${hostname()}/plinth`,
      'postgres://plinth@localhost:5432,127.0.0.1:5433/plinth',
    ]) {
      assert.equal(databaseIsLocal(url), true, url);
    }
    for (const url of [
      'postgres://plinth:pw@db.example/plinth',
      'postgres://plinth@10.255.255.1:5432/plinth',
      'postgres://plinth@localhost:5432,db.example:5432/plinth',
      'postgres:///plinth?host=db.example',
    ]) {
      assert.equal(databaseIsLocal(url), false, url);
    }
  });

  it('is what the configuration holds, unless PLINTH_WORKERS says otherwise', () => {
    const cpus = availableParallelism();
    const local = cpus > 1 ? Math.min(MAX_WORKERS, cpus - 1) : 1;
    assert.equal(loadConfig({}).workers, local, 'embedded PostgreSQL');
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://p@127.0.0.1/plinth' }).workers, local);
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://p@db.example/plinth' }).workers, Math.min(MAX_WORKERS, cpus));
    const explicit = loadConfig({ PLINTH_WORKERS: '3' });
    assert.deepEqual([explicit.workers, explicit.workersReason], [3, 'PLINTH_WORKERS']);
  });
});
