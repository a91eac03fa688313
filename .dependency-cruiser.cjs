/**
 * The layering of the code (issue 33; docs/architecture.md, "Layout"):
 *
 *   harness  ->  world  ->  product  ->  core
 *
 * src/core     clock, rng, events, errors, yaml, kube client + embedded store, controller runtime, PKI
 * src/product  what a provider team ships: API types + CRDs + admission, the HCS cloud client, the provider
 * src/world    the simulated world around it: Cluster API model, guests, workload clusters, the kubectl facade
 *              (mock-hcs/, the fake cloud, belongs to the world too)
 * src/harness  what drives and judges it: scenarios, testbeds, real clusters, explore, reports, dashboard, CLI
 *
 * `npm run depcheck` (run by `npm run lint` and CI) fails on an import that runs back up a layer and on
 * any import cycle.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycles make a module impossible to understand, test or move on its own.',
      from: { path: '^(src|mock-hcs/src)/' },
      to: { circular: true },
    },
    {
      name: 'core-imports-only-core',
      severity: 'error',
      comment: 'src/core is the ground floor: it imports nothing above it.',
      from: { path: '^src/core/' },
      to: { path: '^(src/(product|world|harness)|mock-hcs)/' },
    },
    {
      name: 'product-imports-only-core',
      severity: 'error',
      comment: 'The product (API, cloud client, provider) must not know the simulated world or the harness that tests it.',
      from: { path: '^src/product/' },
      to: { path: '^(src/(world|harness)|mock-hcs)/' },
    },
    {
      name: 'world-does-not-import-harness',
      severity: 'error',
      comment: 'The simulated world (and mock-hcs) must not know the harness that drives it.',
      from: { path: '^(src/world|mock-hcs/src)/' },
      to: { path: '^src/harness/' },
    },
    {
      name: 'mock-hcs-is-its-own-cloud',
      severity: 'error',
      comment: 'The fake cloud reaches the provider only over HTTP: it imports core, never the product or the rest of the world.',
      from: { path: '^mock-hcs/src/' },
      to: { path: '^src/(product|world)/' },
    },
    {
      name: 'src-does-not-import-tests',
      severity: 'error',
      from: { path: '^(src|mock-hcs/src|bin)/' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.mts', '.js', '.mjs', '.json'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
