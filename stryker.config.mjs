// StrykerJS (issue 37): mutation testing of the product code, the scenario library as the test.
// `npx stryker run` alone uses this file; `npm run mutation` (test/mutation/cli.ts) adds the incremental and
// changed-files modes and the per-folder score, and the sharded run on Kubernetes (docs/scenarios.md "Mutation testing").
//
// HCS_MUTATE (comma-separated globs, `file:line-line` ranges allowed) replaces the mutate list below.

import { readFileSync } from 'node:fs';
import { URL } from 'node:url';

/** Everything a scenario judges (test/mutation/mutate.json says what is left out, and why). */
export const MUTATE = JSON.parse(readFileSync(new URL('./test/mutation/mutate.json', import.meta.url), 'utf8')).mutate;

/** Where the reports and the incremental file go (HCS_MUTATION_OUT; a shard writes its own). */
const out = process.env.HCS_MUTATION_OUT ?? 'out/mutation';
const mutate = process.env.HCS_MUTATE ? process.env.HCS_MUTATE.split(',').map((s) => s.trim()).filter(Boolean) : MUTATE;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  plugins: ['./test/mutation/plugin.mjs'],
  testRunner: 'hcs-scenarios',
  // Each mutant runs only the scenarios that executed it in the dry run (test/mutation/scenario-runner.ts).
  coverageAnalysis: 'perTest',
  mutate,
  // The test runner needs the sources, the scenarios and their data; not the tests, docs or tool builds.
  ignorePatterns: ['/bench', '/.ci', '/docs', '/tools', '/out', '/test/*', '!/test/mutation', '/coverage', '/.hcs-testbed', '/.kubectl'],
  // One test-runner process per core; a process is replaced after this many mutants (bounded memory and state).
  concurrency: Number(process.env.HCS_MUTATION_CONCURRENCY ?? 2),
  maxTestRunnerReuse: 400,
  // A scenario runs on virtual time: a mutant that never lets it finish is a timeout (detected, Stryker's default).
  // Generous: the machine is shared, and a slow run must not read as a timeout (a detected mutant).
  timeoutMS: 60_000,
  timeoutFactor: 3,
  // V8 flags of the scenario library's own runs (package.json "scenarios", src/harness/explore/pool.ts): less GC
  // churn, and TurboFan only for truly hot code (~20 % less CPU a library run, measured).
  testRunnerNodeArgs: ['--max-semi-space-size=64', '--interrupt-budget=540672'],
  // The sandbox needs no rewritten tsconfig: tsx reads the copied one (there is no build step).
  tsconfigFile: 'no-tsconfig-rewrite.json',
  disableTypeChecks: true,
  // Always written; reused only with --incremental (a full run passes --force: every mutant tested, the file renewed).
  incremental: true,
  incrementalFile: `${out}/stryker-incremental.json`,
  reporters: ['html', 'json', 'progress', 'hcs-progress'],
  htmlReporter: { fileName: `${out}/index.html` },
  jsonReporter: { fileName: `${out}/mutation.json` },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
