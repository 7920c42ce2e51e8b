// ESLint (flat config) with typed rules from typescript-eslint; `npm run lint` and `npm test` run it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', '.tmp/', '.prof/', 'test/reporter.cjs', 'docs/examples/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: false, requireDefaultForNonUnion: false }],
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'separate-type-imports' }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // A projection's documents are built from event data read back from the log (JSON.parse). On
    // Node 20's V8, an object literal that spreads such an object and then names more fields
    // defines each of them in a slow runtime call: `{ ...event.data, seq }` cost a circle post's
    // projection 7 µs, `Object.assign({}, event.data, { seq })` 0.3 µs (docs/PERFORMANCE.md).
    files: ['projections/**/*.ts'],
    ignores: ['projections/store/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ObjectExpression > SpreadElement:first-child + Property',
          message: 'Spreading an object and then naming fields is slow for event data: use Object.assign({}, data, { ...fields }).',
        },
      ],
    },
  },
  {
    // Koa, koa-body, @koa/router and find-my-way are used through their published APIs only: no
    // reading or writing of a library's private fields (they change without notice in minor releases).
    files: ['api/**/*.ts', 'workers/**/*.ts', 'cli/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'MemberExpression[property.name=/^(_matchedRoute|_matchedRouteName|captures|newRouterPath|routeMatched)$/]',
          message: "@koa/router's private context fields: use ctx.state.route / ctx.state.operation (set by api/operations.ts mount).",
        },
        {
          selector: 'MemberExpression[object.name=/^(router|layer)$/][property.name=/^(match|stack|params|methods|regexp|host)$/]',
          message: '@koa/router internals: register routes with mount() and dispatch with router.routes() / allowedMethods().',
        },
        {
          selector: "MemberExpression[object.name='ctx'][property.name=/^(matched|routerPath|routerName|router)$/]",
          message: "@koa/router's context fields: use ctx.state.route / ctx.state.operation (set by api/operations.ts mount).",
        },
        {
          selector: 'MemberExpression[property.name=/^(trees|_routesPatterns|_on|_readyToBuild|_findRoute|constrainer|_defaultHandler)$/]',
          message: 'find-my-way internals: use its published on() / find() / prettyPrint().',
        },
        {
          // One operation runs another with callOperation / operationContext (api/operations.ts):
          // nothing re-dispatches a request through the router by changing its method or URL.
          selector: "AssignmentExpression > MemberExpression.left[object.name='ctx'][property.name=/^(method|url|path|originalUrl)$/]",
          message: "Run another operation with callOperation / operationContext (api/operations.ts), not by rewriting a context's method or URL.",
        },
      ],
    },
  },
  {
    files: ['eslint.config.js', '.dependency-cruiser.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The pages' own scripts (api/web/assets): plain browser JavaScript, served as written.
    files: ['api/web/assets/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { projectService: false, project: null },
      sourceType: 'script',
      globals: {
        window: 'readonly',
        document: 'readonly',
        navigator: 'readonly',
        location: 'readonly',
        fetch: 'readonly',
        Blob: 'readonly',
        Element: 'readonly',
        HTMLFormElement: 'readonly',
      },
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
);
