import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { startTestServer, type TestServer } from '../support/test-server.js';

const CM = '/api/v1/namespaces/fuzz/configmaps';
const RUNS = Number(process.env.PLINTH_FUZZ_RUNS ?? 120);

/** Sends one request; returns the status and the parsed body (undefined when not JSON). */
async function send(base: string, method: string, path: string, body?: string, contentType = 'application/json'): Promise<{ status: number; body: unknown; text: string }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': contentType },
    body,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text };
}

/** Percent-encodes the UTF-8 bytes of `s` (encodeURIComponent throws on lone surrogates; a client sends U+FFFD's bytes). */
function pct(s: string): string {
  return [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
}

/**
 * The property every answer must have: below 500 and a Status when it is an
 * error. The one 5xx upstream sends for client input is allowed: 504 Timeout
 * (ResourceVersionTooLarge) for a resourceVersion ahead of the newest.
 */
function wellFormed(what: string, r: { status: number; body: unknown; text: string }): void {
  const tooLarge = r.status === 504 && (r.body as { details?: { causes?: Array<{ reason?: string }> } } | undefined)?.details?.causes?.[0]?.reason === 'ResourceVersionTooLarge';
  assert.ok(r.status > 0 && (r.status < 500 || tooLarge), `${what}: ${r.status} ${r.text.slice(0, 500)}`);
  if (r.status >= 400) assert.equal((r.body as { kind?: string } | undefined)?.kind, 'Status', `${what}: ${r.text.slice(0, 500)}`);
}

const anyText = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.constantFrom('', '.', '..', '%', '\u0000', '\ud800', 'a'.repeat(300)));

// Property-based fuzzing of the request surface: bodies, names, selectors, patches and query options.
describe('fuzz: no input gets a 5xx or crashes the server', { timeout: 170_000 }, () => {
  let s: TestServer;

  before(async () => {
    s = await startTestServer('fuzz');
    assert.equal((await send(s.url, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'fuzz' } }))).status, 201);
    assert.equal((await send(s.url, 'POST', CM, JSON.stringify({ metadata: { name: 'base', labels: { a: 'b' } }, data: { k: 'v' } }))).status, 201);
  });
  after(async () => {
    // Whatever happened, the server still answers.
    assert.equal((await send(s.url, 'GET', '/healthz')).status, 200);
    await s?.close();
  });

  it('create bodies: arbitrary JSON values and object shapes', async () => {
    const objectish = fc.record(
      {
        apiVersion: fc.oneof(fc.constant('v1'), anyText, fc.jsonValue()),
        kind: fc.oneof(fc.constant('ConfigMap'), anyText),
        metadata: fc.oneof(fc.record({ name: anyText, labels: fc.dictionary(anyText, anyText), annotations: fc.jsonValue(), generateName: anyText }, { requiredKeys: [] }), fc.jsonValue()),
        data: fc.oneof(fc.dictionary(anyText, anyText), fc.jsonValue()),
        binaryData: fc.dictionary(anyText, anyText),
        immutable: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(objectish, fc.jsonValue()), async (body) => {
        wellFormed('create', await send(s.url, 'POST', CM, JSON.stringify(body)));
      }),
      { numRuns: RUNS },
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(anyText, fc.constantFrom('{', '[1,', '{"a":1,"a":2}', '---\n- a\n', '\u0000')), fc.constantFrom('application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'text/plain'), async (text, type) => {
        wellFormed('raw body', await send(s.url, 'POST', CM, text, type));
      }),
      { numRuns: RUNS },
    );
  });

  it('names and namespaces in the path, for every verb', async () => {
    await fc.assert(
      fc.asyncProperty(anyText, anyText, fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH'), async (ns, name, method) => {
        const path = `/api/v1/namespaces/${pct(ns) || 'x'}/configmaps/${pct(name) || 'x'}`;
        const body = method === 'GET' || method === 'DELETE' ? undefined : JSON.stringify({ metadata: { name }, data: {} });
        wellFormed(`${method} ${path}`, await send(s.url, method, path, body, method === 'PATCH' ? 'application/merge-patch+json' : 'application/json'));
      }),
      { numRuns: RUNS },
    );
  });

  it('label and field selectors', async () => {
    const selector = fc.oneof(anyText, fc.array(fc.oneof(anyText, fc.constantFrom('=', '==', '!=', ' in ', ' notin ', '(', ')', ',', '!', 'metadata.name', 'a')), { maxLength: 8 }).map((xs) => xs.join('')));
    await fc.assert(
      fc.asyncProperty(selector, fc.constantFrom('labelSelector', 'fieldSelector'), async (sel, param) => {
        wellFormed(`${param}=${sel}`, await send(s.url, 'GET', `${CM}?${param}=${pct(sel)}`));
      }),
      { numRuns: RUNS },
    );
  });

  it('patches of every type', async () => {
    const op = fc.record({ op: fc.oneof(fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test'), anyText), path: fc.oneof(fc.constantFrom('/data/k', '/metadata/labels/a', '/data', '/', ''), anyText), from: anyText, value: fc.jsonValue() }, { requiredKeys: ['op'] });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.array(op, { maxLength: 4 }).map((ops) => ({ type: 'application/json-patch+json', body: JSON.stringify(ops) })),
          fc.jsonValue().map((v) => ({ type: 'application/merge-patch+json', body: JSON.stringify(v) })),
          fc.oneof(fc.jsonValue(), fc.record({ $patch: anyText, metadata: fc.record({ '$setElementOrder/finalizers': fc.jsonValue(), finalizers: fc.jsonValue(), $retainKeys: fc.jsonValue() }, { requiredKeys: [] }) }, { requiredKeys: [] })).map((v) => ({ type: 'application/strategic-merge-patch+json', body: JSON.stringify(v) })),
          fc.tuple(anyText, fc.constantFrom('application/apply-patch+yaml', 'text/plain', '')).map(([body, type]) => ({ type, body })),
        ),
        async ({ type, body }) => {
          wellFormed(`patch ${type} ${body.slice(0, 100)}`, await send(s.url, 'PATCH', `${CM}/base`, body, type));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('query options of lists, gets and writes', async () => {
    const value = fc.oneof(anyText, fc.integer().map(String), fc.constantFrom('-1', '0', '1e20', '9007199254740993', 'true', 'NotOlderThan', 'Exact', 'All', 'Strict', 'abc=='));
    const params = fc.dictionary(fc.constantFrom('limit', 'continue', 'resourceVersionMatch', 'timeoutSeconds', 'fieldValidation', 'dryRun', 'pretty', 'allowWatchBookmarks', 'sendInitialEvents', 'propagationPolicy', 'gracePeriodSeconds'), value, { maxKeys: 4 });
    // Revisions slightly ahead of the newest make the server wait (as upstream) before its 504: kept to values answered at once.
    const rv = fc.option(fc.constantFrom('0', '1', '', '-1', 'abc', '1e20', '9007199254740993', '99999999999999999999', ' 1'), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(params, rv, fc.constantFrom('list', 'get', 'create', 'delete'), async (p, resourceVersion, verb) => {
        const q = resourceVersion === undefined ? p : { ...p, resourceVersion };
        const qs = [...Object.entries(q)].map(([k, v]) => `${k}=${pct(v)}`).join('&');
        const r =
          verb === 'list'
            ? await send(s.url, 'GET', `${CM}?${qs}`)
            : verb === 'get'
              ? await send(s.url, 'GET', `${CM}/base?${qs}`)
              : verb === 'create'
                ? await send(s.url, 'POST', `${CM}?${qs}`, JSON.stringify({ metadata: { generateName: 'q-' } }))
                : await send(s.url, 'DELETE', `${CM}/nothing-here?${qs}`);
        wellFormed(`${verb} ?${qs}`, r);
      }),
      { numRuns: RUNS },
    );
  });
});
