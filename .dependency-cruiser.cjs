// Layer rules of ../shared/CONVENTIONS.md ("Layers"), checked by `npm run depcruise` (part of `npm test`).
const layer = (name) => `^${name}/`;
module.exports = {
  forbidden: [
    {
      name: 'events-import-only-events',
      comment: 'events/ is the bottom layer: it imports nothing else of the project.',
      severity: 'error',
      from: { path: layer('events') },
      to: { path: '^(commands|projections|queries|api|workers|cli|test)/' },
    },
    {
      name: 'commands-import-events-only',
      comment: 'commands/ decide on events: they import events/ and other commands, nothing above.',
      severity: 'error',
      from: { path: layer('commands') },
      to: { path: '^(projections|queries|api|workers|cli|test)/' },
    },
    {
      name: 'projections-import-events-only',
      comment: 'projections/ fold events into read models: events/ and projections/ only.',
      severity: 'error',
      from: { path: layer('projections') },
      to: { path: '^(commands|queries|api|workers|cli|test)/' },
    },
    {
      name: 'queries-read-the-store-only',
      comment: 'queries/ read the read store (projections/store) and use the kernel; they never load streams or call commands.',
      severity: 'error',
      from: { path: layer('queries') },
      to: { path: '^(commands|api|workers|cli|test)/|^events/store/|^projections/(?!store/)' },
    },
    {
      name: 'workers-and-cli-do-not-import-api',
      comment: 'workers/ and cli/ take what they need through narrow types of their own, not through api/.',
      severity: 'error',
      from: { path: '^(workers|cli)/' },
      to: { path: layer('api') },
    },
    {
      name: 'lower-layers-do-not-import-workers-or-cli',
      comment: 'Only the process entries (api/server.ts, api/cli.ts), which start the composition root, may start workers or the CLI program.',
      severity: 'error',
      from: { path: '^(events|commands|projections|queries|api)/', pathNot: '^api/(server|cli)\\.ts$' },
      to: { path: '^(workers|cli)/' },
    },
    {
      name: 'production-does-not-import-tests',
      severity: 'error',
      from: { pathNot: '^test/' },
      to: { path: layer('test') },
    },
    {
      name: 'not-to-dev-dep',
      comment:
        'Production code (everything but test/) imports only runtime dependencies: a production install (npm ci --omit=dev) has no devDependencies. Type-only imports are erased at run time and allowed.',
      severity: 'error',
      from: { path: '^(events|commands|projections|queries|api|workers|cli)/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-circular',
      comment: 'Import cycles make load order matter and hide layering mistakes.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|data|\\.tmp|\\.prof)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
};
