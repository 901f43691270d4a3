import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { eventually } from '../support/eventually.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startTestServerOn, type TestServer } from '../support/test-server.js';
import { aesgcmConfig, b64, configFile, createSecrets, KEY1, KEY2, metricSum, query, rotationState, secretValuesNotUnder, waitRotated } from './rotation-support.js';

const SECRETS = 300;

describe('encryption rotation: stopped mid-way, it continues from its cursor', () => {
  let tdb: TestDatabase;
  let s: TestServer | undefined;
  const config = configFile(aesgcmConfig([['key1', KEY1]]));
  const env = (extra: Record<string, string> = {}) => ({ PLINTH_ENCRYPTION_PROVIDER_CONFIG: config.file, ...extra });

  before(async () => {
    tdb = await createTestDatabase('encryption-rotation-resume');
    s = await startTestServerOn(tdb, env());
    await request(s.url).post('/api/v1/namespaces').send({ metadata: { name: 'many' } }).expect(201);
    await createSecrets(s.url, 'many', 's', SECRETS);
    await s.close();
    s = undefined;
  });
  after(async () => {
    await s?.close();
    await tdb?.drop();
  });

  it('a restart with a new first key begins the pass; a stop mid-way and another restart continue it, not begin it again', async () => {
    const hash = config.write(aesgcmConfig([['key2', KEY2], ['key1', KEY1]]));
    // Slow on purpose (50 rows a second, one batch a second), so that the stop lands mid-way.
    s = await startTestServerOn(tdb, env({ PLINTH_ENCRYPTION_ROTATION_ROWS_PER_SECOND: '50' }));
    const stopped = await eventually(async () => {
      const st = await rotationState(tdb.url);
      return st?.target === hash && st.phase === 'objects' && st.checked > 0 ? st : false;
    }, { timeoutMs: 60_000, intervalMs: 50, message: 'the first batch is saved' });
    await s.close();
    s = undefined;
    const saved = await rotationState(tdb.url);
    assert.ok(saved && saved.phase !== 'done', `stopped mid-way (${saved?.phase})`);
    assert.ok(saved.checked >= stopped.checked);
    const objectRows = Number((await query<{ n: string }>(tdb.url, 'SELECT count(*) AS n FROM objects'))[0].n);
    assert.ok(saved.checked < objectRows, `the stop came before the object rows were all checked (${saved.checked} of ${objectRows})`);
    assert.ok((await secretValuesNotUnder(tdb.url, 'k8s:enc:aesgcm:v1:key2:')).length > 0, 'values are still under key1');

    s = await startTestServerOn(tdb, env());
    await waitRotated(s.url, tdb.url, hash);
    const done = await rotationState(tdb.url);
    assert.equal(done?.started_at.getTime(), saved.started_at.getTime(), 'the same pass went on (not begun again)');
    // This process checked only the object rows after the saved cursor.
    const checkedHere = await metricSum(s.url, 'plinth_encryption_rotation_rows_total', 'table="objects"');
    const objectRowsNow = Number((await query<{ n: string }>(tdb.url, 'SELECT count(*) AS n FROM objects'))[0].n);
    assert.ok(checkedHere > 0 && checkedHere <= objectRowsNow - saved.checked, `continued from the cursor: ${checkedHere} object rows checked here, ${saved.checked} before`);
    assert.ok(done && done.checked >= objectRows && done.failed === 0);
    assert.deepEqual(await secretValuesNotUnder(tdb.url, 'k8s:enc:aesgcm:v1:key2:'), []);
    const got = (await request(s.url).get('/api/v1/namespaces/many/secrets/s-7').expect(200)).body;
    assert.equal(got.data.v, b64('s-7-v0'));
  });
});
