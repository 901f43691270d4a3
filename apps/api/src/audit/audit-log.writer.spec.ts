import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AuditLogWriter } from './audit-log.writer.js';

/** lumberjack's backup name: `<name>-<UTC 2006-01-02T15-04-05.000><ext>`. */
const BACKUP = /^audit-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}\.log$/;
// Files beside the log that share its name's start and end but are not its backups.
const UNRELATED = ['audit-notes.log', 'audit-2020.log', 'audit-2024-13-01T00-00-00.000.log', 'audit-policy-v2.log', 'audit-2024-01-01T00-00-00.000.log.bak', 'audit.log.1'];

// Rotation as upstream's --audit-log-maxsize/--audit-log-maxbackup (lumberjack) does it.
describe('audit log rotation', () => {
  let root: string;
  before(() => {
    root = mkdtempSync(path.join(tmpdir(), 'plinth-audit-rotation-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  /** A folder with the unrelated files (and a folder named like a backup), and a writer rotating every few events. */
  const setUp = (label: string, maxBackups: number): { dir: string; writer: AuditLogWriter } => {
    const dir = path.join(root, label);
    mkdirSync(dir);
    for (const f of UNRELATED) writeFileSync(path.join(dir, f), 'not an audit backup\n');
    mkdirSync(path.join(dir, 'audit-2000-01-01T00-00-00.000.log'));
    const writer = new AuditLogWriter({ path: path.join(dir, 'audit.log'), maxBytes: 310, maxBackups, maxBufferedBytes: 1 << 20, dropped: () => assert.fail('no event may be dropped') });
    return { dir, writer };
  };
  /** Writes events that fill `rotations` files of the log (each event is 103 bytes, three fit under 310 and a fourth goes to a new file, as lumberjack decides). */
  const fill = (writer: AuditLogWriter, rotations: number) => {
    for (let i = 0; i < rotations * 3; i++) writer.write({ kind: 'Event', auditID: `event-${String(i).padStart(4, '0')}`, padding: 'x'.repeat(50) });
  };
  const backups = (dir: string) => readdirSync(dir).filter((f) => BACKUP.test(f) && f !== 'audit-2000-01-01T00-00-00.000.log' && !UNRELATED.includes(f)).sort();

  it('keeps the newest maxBackups backups, named as lumberjack names them, and leaves other files alone', async () => {
    const { dir, writer } = setUp('kept', 2);
    fill(writer, 6);
    await writer.close();
    assert.equal(backups(dir).length, 2, `backups: ${readdirSync(dir).join(', ')}`);
    for (const f of UNRELATED) assert.equal(readFileSync(path.join(dir, f), 'utf8'), 'not an audit backup\n', `${f} is not a backup of audit.log`);
    assert.ok(readdirSync(dir).includes('audit-2000-01-01T00-00-00.000.log'), 'a folder is never a backup');
    // The newest events are in the two kept backups and the live file, in order.
    const lines = [...backups(dir), 'audit.log'].flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean));
    assert.equal(JSON.parse(lines[lines.length - 1]).auditID, 'event-0017');
  });

  it('keeps every backup when maxBackups is 0, as upstream does', async () => {
    const { dir, writer } = setUp('all', 0);
    fill(writer, 5);
    await writer.close();
    // Five files of three events: four backups and the live file.
    assert.equal(backups(dir).length, 4, `backups: ${readdirSync(dir).join(', ')}`);
    const events = [...backups(dir), 'audit.log'].flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean));
    assert.deepEqual(events.map((l) => JSON.parse(l).auditID), Array.from({ length: 15 }, (_, i) => `event-${String(i).padStart(4, '0')}`), 'no event lost or reordered');
    for (const f of UNRELATED) assert.ok(readdirSync(dir).includes(f));
  });
});

describe('AuditLogWriter', () => {
  // Written in one go: rotations follow each other within a millisecond, before a new file's stream has opened.
  it('rotates by size, keeps maxBackups files, and loses no line', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-audit-rotate-'));
    const file = path.join(dir, 'audit.log');
    let dropped = 0;
    const w = new AuditLogWriter({ path: file, maxBytes: 400, maxBackups: 2, maxBufferedBytes: 1 << 20, dropped: () => dropped++ });
    for (let i = 0; i < 30; i++) w.write({ i, pad: 'x'.repeat(60) });
    await w.close();
    const files = readdirSync(dir).sort();
    assert.equal(files.filter((f) => f.startsWith('audit-')).length, 2);
    assert.ok(files.includes('audit.log'));
    const kept = files.flatMap((f) => readFileSync(path.join(dir, f), 'utf8').trim().split('\n').filter(Boolean)).map((l) => JSON.parse(l).i as number);
    // The newest lines are all there, in the kept files, each once.
    assert.equal(new Set(kept).size, kept.length);
    assert.ok(kept.includes(29));
    assert.equal(dropped, 0);
  });
});
