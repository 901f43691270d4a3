import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';

const WRITER = pathToFileURL(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../apps/api/src/audit/audit-log.writer.js')).href;
const MAX_BYTES = 8 * 1024;
const EVENTS = 3000;

/** One writer process, as a PLINTH_WORKERS worker is: appends `EVENTS` events tagged `who` to `file`, yielding now and then as a server does between requests. */
function writerProcess(file: string, who: string): Promise<void> {
  const script = `
    const { AuditLogWriter } = await import(${JSON.stringify(WRITER)});
    let dropped = 0;
    const w = new AuditLogWriter({ path: ${JSON.stringify(file)}, maxBytes: ${MAX_BYTES}, maxBackups: 0, maxBufferedBytes: 1 << 24, dropped: () => dropped++ });
    for (let i = 0; i < ${EVENTS}; i++) {
      w.write({ kind: 'Event', auditID: '${who}-' + i, pad: 'x'.repeat(40 + (i % 7) * 10) });
      if (i % 25 === 0) await new Promise((r) => setImmediate(r));
    }
    await w.close();
    if (dropped) { console.error('dropped', dropped); process.exit(3); }
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer ${who} exited with ${code}`))));
  });
}

// PLINTH_WORKERS processes append to one audit log: rotation must count every process's bytes, and one process rotates.
describe('audit log written by two processes', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'plinth-audit-workers-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('rotates on the file\'s own size: no file exceeds the limit by more than one event, and every event is stored exactly once', async () => {
    const file = path.join(dir, 'audit.log');
    await Promise.all([writerProcess(file, 'a'), writerProcess(file, 'b')]);
    const files = readdirSync(dir).filter((f) => f.startsWith('audit'));
    assert.ok(!files.includes('audit.log.lock'), 'no lock is left behind');
    const logs = files.filter((f) => f.endsWith('.log'));
    const largestEvent = Math.max(...logs.flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean).map((l) => Buffer.byteLength(l) + 1)));
    for (const f of logs) {
      const size = statSync(path.join(dir, f)).size;
      assert.ok(size <= MAX_BYTES + largestEvent, `${f} holds ${size} bytes; the limit is ${MAX_BYTES}, an event at most ${largestEvent}`);
    }
    // Together the two processes wrote about 2 × 3000 × 90 bytes: many rotations.
    assert.ok(logs.length > 40, `${logs.length} files`);
    const ids = logs.flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { auditID: string }).auditID));
    assert.equal(ids.length, 2 * EVENTS, 'no event lost or written twice');
    assert.equal(new Set(ids).size, 2 * EVENTS);
    // Each process's events keep their order across the files, read oldest backup first.
    const ordered = [...logs.filter((f) => f !== 'audit.log').sort(), 'audit.log'].flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { auditID: string }).auditID));
    for (const who of ['a', 'b']) {
      const seq = ordered.filter((id) => id.startsWith(`${who}-`)).map((id) => Number(id.slice(2)));
      assert.deepEqual(seq, Array.from({ length: EVENTS }, (_, i) => i), `${who}'s events in order`);
    }
  });
});
