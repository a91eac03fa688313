/**
 * A StrykerJS test runner whose tests are the scenario library (issue 37: "the scenario library is the test").
 *
 * One test per scenario file (its id is the file's path, e.g. `scenarios/rollback.yaml`). The runner lives in
 * Stryker's test-runner child process, whose working directory is Stryker's sandbox: it imports the sandbox's
 * instrumented sources (mutation switching, https://stryker-mutator.io/docs/mutation-testing-elements/mutant-states-and-metrics/)
 * once, through tsx, and runs each scenario in that process, as test/library/library.test.ts does:
 *
 * - dry run: every scenario, each under its own `__stryker__.currentTestId`, so the instrumented code's
 *   coverage counters give Stryker a per-scenario coverage map (coverageAnalysis "perTest"); each mutant is then
 *   run against only the scenarios that executed it. Each scenario's wall time is kept in the sandbox
 *   (`.hcs-scenario-times.json`) so every worker runs a mutant's scenarios fastest first.
 * - mutant run: `__stryker__.activeMutant` set, the covering scenarios in that order, stopping at the first that
 *   fails (bail), unless Stryker says disableBail.
 *
 * No module reload between runs (reloadEnvironment: false): a static mutant (one in code that runs when a module
 * is loaded) makes Stryker start a fresh runner process, where the mutant is switched on before the sources load.
 * The product code keeps no module-level state between testbeds (docs/BRIEF: "no global state"), which is what
 * makes one process per worker sound; `maxTestRunnerReuse` in stryker.config.mjs bounds it anyway.
 *
 * Why not @stryker-mutator/vitest-runner: it works with vitest 4.1, but each mutant run re-imports the testbed in
 * a fresh vitest module graph (~10 s a mutant on 2 shared cores, measured on surge.ts); here a mutant costs only its
 * scenarios (docs/scenarios.md "Mutation testing").
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { commonTokens, declareClassPlugin, PluginKind, tokens } from '@stryker-mutator/api/plugin';
import type { Logger } from '@stryker-mutator/api/logging';
import {
  determineHitLimitReached,
  DryRunStatus,
  MutantRunStatus,
  TestStatus,
  toMutantRunResult,
  type DryRunOptions,
  type DryRunResult,
  type MutantRunOptions,
  type MutantRunResult,
  type TestResult,
  type TestRunner,
  type TestRunnerCapabilities,
} from '@stryker-mutator/api/test-runner';
import type { InstrumenterContext } from '@stryker-mutator/api/core';
import type { loadScenario as LoadScenario } from '../../src/harness/scenario/parse.js';
import type { runScenario as RunScenario, ScenarioResult } from '../../src/harness/scenario/runner.js';
import type { embeddedTestbedFactory as EmbeddedTestbedFactory } from '../../src/harness/testbed/index.js';

/** The scenario library's folder, relative to the sandbox. */
export const SCENARIO_DIR = 'scenarios';
/** Per-scenario wall time of the dry run, written into the sandbox for every worker. */
export const TIMES_FILE = '.hcs-scenario-times.json';

/** The library's test ids: its scenario files, sorted (as `npm run scenarios` and test/library run them). */
export function libraryTestIds(root: string): string[] {
  return readdirSync(join(root, SCENARIO_DIR))
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => `${SCENARIO_DIR}/${f}`);
}

/** `ids` ordered fastest first by `times` (unknown ones last, in their given order): a kill is found soonest. */
export function fastestFirst(ids: readonly string[], times: Readonly<Record<string, number>>): string[] {
  const at = new Map(ids.map((id, i) => [id, i]));
  const t = (id: string): number => times[id] ?? Number.POSITIVE_INFINITY;
  return [...ids].sort((a, b) => t(a) - t(b) || at.get(a)! - at.get(b)!);
}

/** The failure message of a scenario run: its first failing step, as the library's test prints it. */
export function failureOf(r: ScenarioResult): string | undefined {
  if (r.ok) return undefined;
  const s = r.steps.find((x) => !x.ok);
  if (!s) return `scenario ${r.scenario.name} failed`;
  return [`step ${s.index}: ${s.title}`, s.error ?? '', ...s.detail.slice(0, 5)].filter(Boolean).join('\n').slice(0, 2000);
}

interface Engine {
  loadScenario: typeof LoadScenario;
  runScenario: typeof RunScenario;
  embeddedTestbedFactory: typeof EmbeddedTestbedFactory;
}

type Namespace = InstrumenterContext;

function namespace(): Namespace {
  const g = globalThis as unknown as { __stryker__?: Namespace };
  return (g.__stryker__ ??= {});
}

/** Console output of the code under test (the Huawei SDK logs every HTTP error) would only fill Stryker's logs. */
function quiet<T>(fn: () => Promise<T>): Promise<T> {
  const saved = { log: console.log, info: console.info, warn: console.warn, error: console.error, debug: console.debug };
  const none = (): void => undefined;
  Object.assign(console, { log: none, info: none, warn: none, error: none, debug: none });
  return fn().finally(() => Object.assign(console, saved));
}

export class ScenarioTestRunner implements TestRunner {
  static inject = tokens(commonTokens.logger);
  private engine: Engine | undefined;
  private readonly root = process.cwd();

  constructor(private readonly log: Logger) {}

  capabilities(): TestRunnerCapabilities {
    return { reloadEnvironment: false };
  }

  /** The sandbox's sources, loaded once (lazily: a static mutant must be active before they load). */
  private async load(): Promise<Engine> {
    if (this.engine) return this.engine;
    const { register } = (await import('tsx/esm/api')) as { register: () => unknown };
    register();
    const src = (p: string): string => pathToFileURL(join(this.root, p)).href;
    const [parse, runner, testbed] = await Promise.all([
      import(src('src/harness/scenario/parse.ts')) as Promise<{ loadScenario: typeof LoadScenario }>,
      import(src('src/harness/scenario/runner.ts')) as Promise<{ runScenario: typeof RunScenario }>,
      import(src('src/harness/testbed/index.ts')) as Promise<{ embeddedTestbedFactory: typeof EmbeddedTestbedFactory }>,
    ]);
    this.engine = { loadScenario: parse.loadScenario, runScenario: runner.runScenario, embeddedTestbedFactory: testbed.embeddedTestbedFactory };
    return this.engine;
  }

  /** Run one scenario; a thrown error is a failure like a failed step. */
  private async runOne(id: string): Promise<TestResult> {
    const e = this.engine!;
    const t0 = performance.now();
    let failure: string | undefined;
    try {
      const r = await quiet(() => e.runScenario(e.loadScenario(join(this.root, id)), e.embeddedTestbedFactory()));
      failure = failureOf(r);
    } catch (err) {
      failure = `scenario threw: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`.slice(0, 2000);
    }
    const base = { id, name: id, fileName: join(this.root, id), timeSpentMs: Math.round(performance.now() - t0) };
    return failure === undefined ? { ...base, status: TestStatus.Success } : { ...base, status: TestStatus.Failed, failureMessage: failure };
  }

  async dryRun(options: DryRunOptions): Promise<DryRunResult> {
    const ns = namespace();
    ns.activeMutant = undefined;
    ns.hitCount = undefined;
    try {
      await this.load();
    } catch (err) {
      return { status: DryRunStatus.Error, errorMessage: `the sandbox's sources did not load: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}` };
    }
    const tests: TestResult[] = [];
    for (const id of libraryTestIds(this.root)) {
      ns.currentTestId = options.coverageAnalysis === 'perTest' ? id : undefined;
      tests.push(await this.runOne(id));
      ns.currentTestId = undefined;
    }
    writeFileSync(join(this.root, TIMES_FILE), JSON.stringify(Object.fromEntries(tests.map((t) => [t.id, t.timeSpentMs]))));
    // The per-scenario coverage, for planning (test/mutation/plan.ts estimates a run's cost and splits it into shards).
    const dump = process.env.HCS_MUTATION_COVERAGE_DUMP;
    if (dump) writeFileSync(dump, JSON.stringify({ times: Object.fromEntries(tests.map((t) => [t.id, t.timeSpentMs])), coverage: ns.mutantCoverage ?? null }));
    this.log.debug(`dry run: ${tests.map((t) => `${t.id} ${t.timeSpentMs} ms`).join(', ')}`);
    return { status: DryRunStatus.Complete, tests, ...(options.coverageAnalysis !== 'off' && ns.mutantCoverage ? { mutantCoverage: ns.mutantCoverage } : {}) };
  }

  async mutantRun(options: MutantRunOptions): Promise<MutantRunResult> {
    const ns = namespace();
    // A static mutant is switched on before the sources load (Stryker gives it a fresh process).
    if (options.mutantActivation === 'static') ns.activeMutant = options.activeMutant.id;
    try {
      await this.load();
    } catch (err) {
      ns.activeMutant = undefined;
      // A mutant in code that runs on load can break the load itself: the library fails, so the mutant is killed.
      return { status: MutantRunStatus.Killed, killedBy: [], failureMessage: `the sources did not load: ${err instanceof Error ? err.message : String(err)}`, nrOfTests: 0 };
    }
    ns.currentTestId = undefined;
    ns.activeMutant = options.activeMutant.id;
    ns.hitLimit = options.hitLimit;
    ns.hitCount = options.hitLimit === undefined ? undefined : 0;
    const timesFile = join(this.root, TIMES_FILE);
    const times = existsSync(timesFile) ? (JSON.parse(readFileSync(timesFile, 'utf8')) as Record<string, number>) : {};
    const ids = fastestFirst(options.testFilter ?? libraryTestIds(this.root), times);
    const tests: TestResult[] = [];
    try {
      for (const id of ids) {
        const t = await this.runOne(id);
        tests.push(t);
        if (t.status === TestStatus.Failed && !options.disableBail) break;
      }
    } finally {
      ns.activeMutant = undefined;
    }
    const hit = determineHitLimitReached(ns.hitCount, ns.hitLimit);
    ns.hitCount = undefined;
    return toMutantRunResult(hit ?? { status: DryRunStatus.Complete, tests });
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.TestRunner, 'hcs-scenarios', ScenarioTestRunner)];
