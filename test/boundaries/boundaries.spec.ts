import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const cli = path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const config = path.join(root, '.dependency-cruiser.cjs');

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

/** Runs dependency-cruiser with the project's rules over `dirs`, from `cwd`; `errors` counts rule violations. */
function cruise(cwd: string, dirs: string[]): { errors: number; violations: Violation[] } {
  const res = spawnSync(process.execPath, [cli, ...dirs, '--config', config, '--output-type', 'json'], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  assert.ok(res.stdout, `dependency-cruiser printed nothing: ${res.stderr}`);
  const { summary } = JSON.parse(res.stdout);
  return { errors: summary.error, violations: summary.violations };
}

describe('import boundaries (.dependency-cruiser.cjs)', () => {
  it('reports each broken rule of the fixture tree and fails', () => {
    const { errors, violations } = cruise(path.join(root, 'test/fixtures/boundaries'), ['apps', 'libs']);
    assert.equal(errors, violations.length);
    assert.ok(errors >= 14);
    const byRule = (name: string) => violations.filter((v) => v.rule.name === name).map((v) => v.from);
    assert.deepEqual(byRule('libs-never-import-apps'), ['libs/a/src/to-app.ts']);
    assert.deepEqual(byRule('packages-only-through-index'), ['libs/b/src/deep-import.ts']);
    assert.deepEqual(byRule('alias-resolves-to-index'), ['apps/web/src/deep-alias.ts']);
    assert.deepEqual(byRule('sql-only-in-storage'), ['apps/web/src/sql.ts']);
    assert.deepEqual(byRule('machinery-libs-without-nest-or-sql'), ['libs/cel/src/nest.ts']);
    assert.ok(byRule('no-folder-cycles-in-libs').includes('libs/b/src/p'));
    assert.ok(byRule('no-folder-cycles-in-libs').includes('libs/b/src/q'));
    // catalog <-> pricing import each other's types only: type-only imports count as dependencies too.
    assert.deepEqual(byRule('no-folder-cycles-in-apps').sort(), ['apps/web/src/billing', 'apps/web/src/catalog', 'apps/web/src/orders', 'apps/web/src/pricing']);
    // The top-level folders follow TOP_LEVEL: pricing -> catalog (type-only) and billing -> orders go up; shop/cart ->
    // users/accounts closes a cycle of the top-level folders shop and users that no two leaf folders form.
    assert.deepEqual(byRule('top-level-folders-layered').sort(), ['apps/web/src/billing/invoice.ts', 'apps/web/src/pricing/price.ts', 'apps/web/src/shop/cart/cart.ts']);
    assert.ok(!byRule('no-folder-cycles-in-apps').some((f) => /\/(shop|users)/.test(f)), 'the leaf-folder rule alone misses the shop/users cycle');
    assert.deepEqual(byRule('top-level-folder-declared'), ['apps/web/src/misc/undeclared.ts']);
    assert.deepEqual(byRule('wiring-at-the-top'), ['apps/web/src/users/wiring-user.ts']);
    assert.deepEqual(byRule('only-wiring-imports-modules'), ['apps/web/src/shop/shop-tokens.ts']);
  });

  it('finds no violation in the repository', () => {
    const { errors, violations } = cruise(root, ['apps', 'libs', 'migrations', 'test', 'bench']);
    assert.deepEqual(
      violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`),
      [],
    );
    assert.equal(errors, 0);
  });
});
