import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsonListEncoder } from './json-list-encoder.js';

const envelope = { kind: 'WidgetList', apiVersion: 'example.com/v1', metadata: { resourceVersion: '42', continue: 'x"y' } };
const items = [
  { metadata: { name: 'a', labels: { 'z': '1', 'a': 'multi\nline' } }, spec: { list: [1, [], {}, null, 'é\u2028'] } },
  { metadata: { name: 'b' }, data: {} },
  { metadata: { name: 'c' }, nested: { deep: [{ x: [{ y: true }] }] } },
];

/** Encodes with the items split into the given batch sizes. */
function encode(pretty: boolean, batches: number[]): string {
  const enc = new JsonListEncoder(envelope, 'items', pretty);
  let out = enc.head();
  let at = 0;
  for (const n of batches) {
    out += enc.items(items.slice(at, at + n));
    at += n;
  }
  return out + enc.tail();
}

describe('JsonListEncoder', () => {
  for (const pretty of [false, true]) {
    const whole = (list: unknown[]) => JSON.stringify({ ...envelope, items: list }, null, pretty ? 2 : undefined) + '\n';

    it(`writes the same bytes as encoding the whole list at once (pretty=${pretty}), however the items are batched`, () => {
      for (const batches of [[3], [1, 2], [1, 1, 1], [0, 2, 0, 1]]) assert.equal(encode(pretty, batches), whole(items));
    });

    it(`writes an empty list as an empty array (pretty=${pretty})`, () => {
      assert.equal(encode(pretty, []), whole([]));
      assert.equal(encode(pretty, [0, 0]), whole([]));
    });
  }

  it('keeps the envelope key order and puts the array last (a Table\'s rows)', () => {
    const table = { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: {}, columnDefinitions: [{ name: 'Name' }] };
    const enc = new JsonListEncoder(table, 'rows', false);
    const text = enc.head() + enc.items([{ cells: ['a'] }]) + enc.tail();
    assert.equal(text, JSON.stringify({ ...table, rows: [{ cells: ['a'] }] }) + '\n');
  });
});
