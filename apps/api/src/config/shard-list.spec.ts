import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from './app-config.js';
import { parseShardList } from './shard-list.js';

describe('PLINTH_SHARDS', () => {
  it('parses name=url pairs separated by spaces', () => {
    assert.deepEqual(parseShardList(' eu-1=postgres://u:p@db1:5432/plinth  eu-2=postgresql://db2/plinth?sslmode=require '), [
      { name: 'eu-1', url: 'postgres://u:p@db1:5432/plinth' },
      { name: 'eu-2', url: 'postgresql://db2/plinth?sslmode=require' },
    ]);
    assert.deepEqual(parseShardList(''), []);
  });

  it('refuses bad names, the reserved name default, other schemes and duplicates', () => {
    assert.throws(() => parseShardList('EU=postgres://db/p'), /DNS-1123 label/);
    assert.throws(() => parseShardList('default=postgres://db/p'), /other than "default"/);
    assert.throws(() => parseShardList('a=mysql://db/p'), /must be postgres:\/\//);
    assert.throws(() => parseShardList('a=postgres://db/p a=postgres://db/q'), /named twice/);
  });

  it('names the variable and never prints the password of a rejected entry', () => {
    assert.throws(
      () => loadConfig({ PLINTH_SHARDS: 'x=mysql://admin:s3cret@db/p' }),
      (e: Error) => e.message.includes('PLINTH_SHARDS') && !e.message.includes('s3cret'),
    );
    assert.deepEqual(loadConfig({ PLINTH_SHARDS: 'x=postgres://db/p' }).shards, [{ name: 'x', url: 'postgres://db/p' }]);
  });
});
