import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { setCorruptObjectReporting, type CachedChange } from '@plinth/storage';
import type { WatchFormat } from './watch-encoder.js';
import { WatchStream, type WatchStreamOwner } from './watch-stream.js';

/** A response that records what is written (no socket: each event is one write). */
function response() {
  const written: string[] = [];
  const res = {
    chunkedEncoding: false,
    socket: null,
    writableLength: 0,
    writableEnded: false,
    destroyed: false,
    write(b: Buffer) {
      written.push(b.toString());
      return true;
    },
    end() {
      res.writableEnded = true;
    },
    once() {},
    cork() {},
    uncork() {},
  };
  return { res: res as unknown as ServerResponse, written };
}

const format = { key: 'json', encoding: 'json', transform: 'none', includeObject: 'Object', def: {}, contentType: 'application/json' } as unknown as WatchFormat;

function stream(name?: string) {
  const closed: string[] = [];
  const owner: WatchStreamOwner = { maxBufferBytes: 1 << 20, streamClosed: (_s, reason) => closed.push(reason), eventsWritten() {}, unsubscribe() {} };
  const { res, written } = response();
  const s = new WatchStream(owner, res, 't\u0000secrets', { tenant: 't', resource: 'secrets', namespace: 'ns', name, matches: undefined }, format, Date.now() + 60_000, 0);
  return { s, written, closed };
}

const unreadable = (revision: number, name: string): CachedChange => ({
  revision,
  key: { tenant: 't', resource: 'secrets', namespace: 'ns', name },
  type: 'MODIFIED',
  object: { 'k8s:enc': 'k8s:enc:aesgcm:v1:key1:AAAA', metadata: { resourceVersion: String(revision) } },
  prevObject: null,
  unreadable: 'no matching key was found for the provided AES transformer',
});

describe('a watch given a change it cannot decrypt', () => {
  it('writes an ERROR event with upstream\'s 500 InternalError and ends, showing nothing of the stored value', () => {
    const { s, written, closed } = stream();
    s.onChange(unreadable(5, 'db'));
    assert.equal(written.length, 1);
    const event = JSON.parse(written[0]) as { type: string; object: { code: number; reason: string; message: string } };
    assert.equal(event.type, 'ERROR');
    assert.equal(event.object.code, 500);
    assert.equal(event.object.reason, 'InternalError');
    assert.equal(event.object.message, 'Internal error occurred: no matching key was found for the provided AES transformer');
    assert.equal(written[0].includes('k8s:enc'), false);
    assert.deepEqual(closed, ['error']);
  });

  it("ends with upstream's 500 StorageReadError at an unreadable DELETED change while unreadable objects are reported", () => {
    const restore = setCorruptObjectReporting(true);
    try {
      const { s, written, closed } = stream();
      s.onChange({ ...unreadable(6, 'db'), type: 'DELETED', unreadableDetail: 'no matching key was found for the provided AES transformer' });
      const event = JSON.parse(written[0]) as { type: string; object: { code: number; reason: string; message: string } };
      assert.deepEqual([event.type, event.object.code, event.object.reason], ['ERROR', 500, 'StorageReadError']);
      assert.equal(event.object.message, 'saw a DELETED event, but object data is corrupt - data from the storage is not transformable revision=0: no matching key was found for the provided AES transformer');
      assert.deepEqual(closed, ['error']);
    } finally {
      restore();
    }
  });

  it('is not disturbed by an unreadable change of an object it does not watch', () => {
    const { s, written, closed } = stream('other');
    s.onChange(unreadable(5, 'db'));
    assert.deepEqual(written, []);
    assert.deepEqual(closed, []);
    assert.equal(s.receivesUnreadable, true);
  });
});
