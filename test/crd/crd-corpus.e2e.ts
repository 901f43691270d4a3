import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { kubectl, type KubectlResult, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

// Real CRDs from well-known projects, which kube-apiserver installs (their CEL rules within upstream's cost
// budgets), installed as their users install them. Sources and versions: test/fixtures/crd-corpus/corpus.json.
// Compiled to dist/test/crd: the fixtures stay in the source tree.
const CORPUS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/crd-corpus');

interface Project {
  name: string;
  version: string;
  crds: Array<{ file: string }>;
  examples: Array<{ file: string }>;
}

const { projects } = JSON.parse(readFileSync(path.join(CORPUS, 'corpus.json'), 'utf8')) as { projects: Project[] };

function ok(r: KubectlResult): string {
  assert.equal(r.code, 0, `kubectl failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

/** `kind/name` of every object in a YAML file, as `kubectl get` names them. */
function objectsOf(file: string): Array<{ kind: string; name: string }> {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as { kind?: string; metadata?: { name?: string } } | null)
    .filter((o): o is { kind: string; metadata: { name: string } } => typeof o?.kind === 'string' && typeof o.metadata?.name === 'string')
    .map((o) => ({ kind: o.kind, name: o.metadata.name }));
}

describe('a corpus of real CRDs with CEL rules: kubectl apply --server-side installs every one, and their examples are created', () => {
  let s: TestServer;
  let kc: string;
  const k = (args: string[]) => kubectl(kc, args, undefined, 120_000);

  before(async () => {
    s = await startTestServer('crd-corpus');
    kc = writeTestKubeconfig(s.url);
    ok(await k(['create', 'namespace', 'corpus']));
  });
  after(async () => s?.close());

  for (const p of projects) {
    it(`${p.name} ${p.version}: ${p.crds.length} CRD(s)${p.examples.length > 0 ? ' and the project\'s example' : ''}`, async () => {
      for (const { file } of p.crds) {
        const f = path.join(CORPUS, file);
        const [crd] = objectsOf(f);
        assert.equal(ok(await k(['apply', '--server-side', '-f', f])).trim(), `customresourcedefinition.apiextensions.k8s.io/${crd.name} serverside-applied`);
        ok(await k(['wait', '--for', 'condition=Established', '--timeout=30s', '-f', f]));
      }
      for (const { file } of p.examples) {
        const f = path.join(CORPUS, file);
        const out = ok(await k(['apply', '--server-side', '-n', 'corpus', '-f', f]));
        for (const o of objectsOf(f)) {
          assert.match(out, new RegExp(`/${o.name} serverside-applied$`, 'm'));
          const got = JSON.parse(ok(await k(['get', '-n', 'corpus', o.kind, o.name, '-o', 'json'])));
          assert.equal(got.metadata.name, o.name);
          assert.equal(got.kind, o.kind);
        }
      }
    });
  }
});
