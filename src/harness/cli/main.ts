#!/usr/bin/env node
/**
 * hcs-testbed command line. `hcs-testbed --help` for usage.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { errorMessage, InputError } from '../../core/errors.js';
import { ConsoleReporter } from '../report/console.js';
import { writeJsonReports } from '../report/json.js';
import { writeJunit } from '../report/junit.js';
import { coverageText, specCoverage } from '../report/coverage.js';
import { writeHtml } from '../report/html.js';
import { LIBRARY_DIR, loadScenario, ScenarioErrors } from '../scenario/parse.js';
import { runScenario, type ScenarioResult } from '../scenario/runner.js';
import { conformanceTable, conformanceText } from '../scenario/conformance.js';
import type { Scenario } from '../scenario/types.js';
import { BACKENDS, CAPI_MODES, PROVIDER_MODES, openBackend, type BackendName, type CapiMode, type OpenBackend, type ProviderMode } from '../realcluster/backends.js';
import { parseDuration } from '../../core/clock.js';
import { SUBCOMMANDS } from './entrypoints.js';
import { kindMain } from './kind.js';
import { exploreMain } from './explore.js';
import { runParallel, SCENARIO_STALL_MS } from './jobs.js';
import { WorkerPool } from '../explore/pool.js';
import { defaultJobs } from '../explore/pool.js';

/** validate/run print at most this many input errors, then the count of the rest (issue 24). */
export const MAX_PRINTED_ERRORS = 100;
import { embeddedFactory, loadPlugin } from '../explore/plugin.js';
import { armScenarioSchedule } from '../explore/schedule.js';
import { sweep } from '../scenario/seeds.js';

const HELP = `hcs-testbed — a simulated Huawei Cloud Stack provider and Cluster API testbed

Usage:
  hcs-testbed run [PATH...] [options]    replay scenarios (files, or directories of *.yaml)
  hcs-testbed conformance [PATH...] [options]   run only the contract checks against any provider
                                         (same options as run; = run --conformance) and print the
                                         table rule | scenarios | pass/fail (docs/provider.md "The contract")
  hcs-testbed validate [PATH...]         check scenario files (and their manifests) without running them:
                                         every error at once, with "did you mean" suggestions
                                         (a scenario with from: BUNDLE starts from a captured state,
                                         docs/incident.md)
  hcs-testbed explore SCENARIO [opts]    seeds x random fault/crash schedules, shrunk findings (explore --help)
  hcs-testbed kind up|down [--name N]    a kind cluster with the CRDs (needs Docker; see kind --help)
  hcs-testbed serve [--preset NAME]      a live testbed for the real kubectl and a browser (serve --help)
  hcs-testbed time pause|resume|speed X|advance 5m|next   control serve's clock (time --help)
  hcs-testbed status                     serve's hostnames now and why anything is waiting (status --help)
  hcs-testbed demo worker-nodes|cluster-upgrade   a document as a guided demo against serve (demo --help)
  hcs-testbed catalog                    flavors, images, zones, subnets, OS Support Matrix: the documents' values
  hcs-testbed apiserver                  a real kube-apiserver + etcd with the CRDs (apiserver --help)
  hcs-testbed crds                       print the CRDs as YAML
  hcs-testbed rules [ID...] [--markdown] the rule catalogue (NET-1 ... HCS-6; docs/rules.md)
  hcs-testbed mock-hcs [--port N]        the fake HCS cloud alone (mock-hcs --help)
  hcs-testbed provider --kubeconfig F --cloud-url U   the HCS provider as a standalone controller process (provider --help)
  hcs-testbed capture --kubeconfig F --cloud-url U --project P   a cluster and its HCS project in one bundle
                                         (--offline from dumps; --scenario writes a replay; capture --help)
  hcs-testbed doctor BUNDLE|--kubeconfig F ...   the disk-reuse contract judged on one state (doctor --help)
  hcs-testbed --help

Run options:
  --seed N                 override every scenario's seed (replays a failing run exactly)
  --seeds N                run every scenario on N seeds: its own seed, then N-1 derived from it
                           (deterministic; a failing one is reported as <name>@seed-<S>, replay
                           it with --seed S)
  --backend NAME           management cluster: embedded (default, in-process, deterministic),
                           kubeconfig (a real, dedicated cluster such as kind: CRDs installed,
                           emptied before each scenario), apiserver (the kube-apiserver + etcd
                           built by tools/kube/build.sh, started for the run)
  --kubeconfig FILE        kubeconfig backend: the cluster (default $KUBECONFIG, ~/.kube/config)
  --context NAME           kubeconfig backend: the context (default: the current one)
  --webhook-host HOST      serve the testbed's admission webhook to the cluster at HOST (an
                           address the apiserver can reach: kind needs the Docker gateway);
                           on by default (127.0.0.1) for --backend apiserver; with --backend kubeconfig
                           and --capi external or --provider in-cluster the workload clusters are
                           served there too (the cluster's pods reach them)
  --no-webhook             do not serve the admission webhook (only the CRDs' CEL rules hold)
  --capi MODE              the Cluster API: embedded (default: the testbed's, in this process),
                           upstream (the v1.10.10 managers of tools/capi/build.sh; --backend apiserver
                           only, in a network namespace with only lo; docs/real-clusters.md §6.2),
                           external (none started: the cluster has its own, e.g. kind after clusterctl
                           init); not with --backend embedded
  --provider MODE          the HCS provider: embedded (default, in this process) or external (none
                           started: your provider reconciles against this run's mock-hcs; its URL, AK/SK,
                           CA and the kubeconfig are written to --external-dir; docs/real-clusters.md §7),
                           or in-cluster (--backend kubeconfig: deployment/hcs-controller-manager of
                           \`hcs-testbed kind up --managers in-cluster\`; the run serves mock-hcs where that
                           Deployment expects it and follows its log into --provider-log, default
                           <external-dir>/provider.log; docs/real-clusters.md §4.3)
  --external-dir DIR       --provider external: where provider.env/provider.json/cloud-ca.pem and a copy of
                           the apiserver's kubeconfig go (default out/external); provider.env also names the
                           provider's health address (HCS_HEALTH_ADDR: a free port outside the ephemeral range,
                           so the run's own listeners cannot take it) and its stop file (HCS_STOP_FILE)
  --external-ready-file F  --provider external: the ready marker, written (holding provider.env's path) once
                           every file is in place (default <external-dir>/ready; removed when the run starts)
  --cloud-port N           --provider external: the port of the run's mock-hcs address (default: a free one)
  --provider-log FILE      --provider external: your provider's log (one JSON or text line per entry), read
                           by controllerLog checks and kubectl logs deployment/hcs-controller-manager
  --provider-health URL    --provider external: wait until URL answers 200 before the first scenario
                           (auto: http://$HCS_HEALTH_ADDR/readyz; a port of the run's own is refused)
  --provider-wait DUR      how long to wait for it (default 2m; in-cluster: for the Deployment, default 5m)
  --provider-stop-wait DUR --provider external: at the end the run creates HCS_STOP_FILE and waits this long
                           (default 15s) for the provider's health endpoint to go before it stops the apiserver
  --speed X                with anything external: virtual seconds per wall second (default 10); time is
                           paced by the wall clock so that the outside controllers have time to act
  --manifests DIR          another place a relative manifest path of an apply step is looked up
                           (repeatable; after the scenario's own manifestPath, before the library;
                           library:NAME always means the library's scenarios/manifests/NAME)
  --report LIST            comma-separated: console,json,junit,html (default: console)
  --out DIR                where json/junit/html reports go (default: out/)
  --jobs N                 run scenarios on N processes (default: the machine's cores; embedded backend
                           only); same output order, reports and event logs as --jobs 1
  --plugin MODULE          a testbed plugin (options()/prepare(testbed)), e.g. the planted bug an
                           explore bundle was found with (docs/explore.md); embedded backend only
  --conformance            hold the provider to the contract only (docs/provider.md "The contract"):
                           checks of the reference provider's own output (its log wording, condition and
                           Event messages, Event counts and rule annotations, conditions outside the
                           contract, server name == HCSMachine name) are skipped and marked skipped, or
                           run as their contract core; prints the table rule | scenarios | pass/fail
                           with the failing step and its evidence. Typical:
                             hcs-testbed conformance scenarios/scale-out-workers.yaml --backend apiserver \
                               --provider external --external-ready-file out/external/ready
  --require-coverage       fail unless the passing scenarios exercise every SPEC rule ID
  --verbose, -v            show check verdicts and command output for passing steps too
  --no-color               plain output

PATH defaults to scenarios/. Exit codes: 0 all scenarios passed, 1 a scenario
failed, 2 bad input (unreadable or invalid scenario or manifest).

Examples:
  hcs-testbed run                                        # the whole library, embedded backend
  hcs-testbed run scenarios/scale-out-workers.yaml -v
  hcs-testbed run scenarios/scale-out-workers.yaml --seed 7 --report console,json,junit --out out/
  hcs-testbed run --backend apiserver                    # the library on a real kube-apiserver
  hcs-testbed run --backend apiserver --provider external --provider-log out/provider.log   # your own provider
  hcs-testbed kind up && hcs-testbed run --backend kubeconfig --kubeconfig out/kind/kubeconfig --webhook-host 172.18.0.1
`;

function scenarioFiles(paths: string[]): string[] {
  const out: string[] = [];
  for (const p of paths.length ? paths : ['scenarios']) {
    let st;
    try {
      st = statSync(p);
    } catch {
      throw new InputError('no such file or directory', p);
    }
    if (st.isDirectory()) {
      const files = readdirSync(p).filter((f) => /\.ya?ml$/.test(f)).sort();
      if (files.length === 0) throw new InputError('directory holds no scenario files (*.yaml)', p);
      out.push(...files.map((f) => join(p, f)));
    } else out.push(p);
  }
  return out;
}

/** Does the run hold every scenario file of the library (scenarios/*.yaml)? Only then is the SPEC coverage line printed. */
export function isWholeLibrary(files: string[]): boolean {
  let library: string[];
  try {
    library = scenarioFiles([LIBRARY_DIR]).map((f) => resolve(f));
  } catch {
    return false;
  }
  const run = new Set(files.map((f) => resolve(f)));
  return library.every((f) => run.has(f));
}

/** What main() opens; tests substitute a backend (e.g. one whose testbeds crash). */
export interface MainDeps {
  openBackend?: typeof openBackend;
}

export async function main(argv: string[], write: (s: string) => void = (s) => process.stdout.write(s), deps: MainDeps = {}): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    write(HELP);
    return command ? 0 : 2;
  }
  if (command === 'kind') return kindMain(rest, write);
  if (command === 'explore') return exploreMain(rest, write);
  const sub = SUBCOMMANDS[command];
  if (sub) return sub(rest, write);
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        seed: { type: 'string' },
        seeds: { type: 'string' },
        report: { type: 'string', default: 'console' },
        out: { type: 'string', default: 'out' },
        verbose: { type: 'boolean', short: 'v', default: false },
        'no-color': { type: 'boolean', default: false },
        'require-coverage': { type: 'boolean', default: false },
        conformance: { type: 'boolean', default: false },
        backend: { type: 'string', default: 'embedded' },
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        'webhook-host': { type: 'string' },
        'no-webhook': { type: 'boolean', default: false },
        capi: { type: 'string' },
        provider: { type: 'string' },
        'external-dir': { type: 'string' },
        'cloud-port': { type: 'string' },
        'provider-log': { type: 'string' },
        'provider-health': { type: 'string' },
        'provider-wait': { type: 'string' },
        'external-ready-file': { type: 'string' },
        'provider-stop-wait': { type: 'string' },
        speed: { type: 'string' },
        jobs: { type: 'string' },
        plugin: { type: 'string' },
        manifests: { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (e) {
    write(`error: ${errorMessage(e)}\n\n${HELP}`);
    return 2;
  }
  const o = parsed.values;
  if (o.help) {
    write(HELP);
    return 0;
  }
  const conformance = command === 'conformance' || !!o.conformance;
  if (command !== 'run' && command !== 'validate' && command !== 'conformance') {
    write(`error: unknown command "${command}"\n\n${HELP}`);
    return 2;
  }
  let seed: number | undefined;
  if (o.seed !== undefined) {
    seed = Number(o.seed);
    if (!Number.isInteger(seed)) {
      write(`error: --seed must be an integer, got "${o.seed}"\n`);
      return 2;
    }
  }
  let seeds = 1;
  if (o.seeds !== undefined) {
    seeds = Number(o.seeds);
    if (!Number.isInteger(seeds) || seeds < 1) {
      write(`error: --seeds must be an integer >= 1, got "${o.seeds}"\n`);
      return 2;
    }
    if (seed !== undefined) {
      write('error: --seed and --seeds exclude each other (--seed replays one seed, --seeds sweeps several)\n');
      return 2;
    }
  }
  const reports = (o.report ?? 'console').split(',').map((s) => s.trim()).filter(Boolean);
  const bad = reports.filter((r) => !['console', 'json', 'junit', 'html'].includes(r));
  if (bad.length) {
    write(`error: --report: unknown report "${bad.join(', ')}" (known: console, json, junit, html)\n`);
    return 2;
  }

  const backendName = o.backend ?? 'embedded';
  if (!(BACKENDS as readonly string[]).includes(backendName)) {
    write(`error: --backend: unknown backend "${backendName}" (known: ${BACKENDS.join(', ')})\n`);
    return 2;
  }
  if (backendName !== 'kubeconfig' && (o.kubeconfig !== undefined || o.context !== undefined)) {
    write(`error: --kubeconfig and --context go with --backend kubeconfig (got --backend ${backendName})\n`);
    return 2;
  }

  const capi = o.capi ?? 'embedded';
  if (!(CAPI_MODES as readonly string[]).includes(capi)) {
    write(`error: --capi: unknown mode "${capi}" (known: ${CAPI_MODES.join(', ')})\n`);
    return 2;
  }
  const provider = o.provider ?? 'embedded';
  if (!(PROVIDER_MODES as readonly string[]).includes(provider)) {
    write(`error: --provider: unknown mode "${provider}" (known: ${PROVIDER_MODES.join(', ')})\n`);
    return 2;
  }
  if (backendName === 'embedded' && capi !== 'embedded') {
    write(`error: --capi ${capi} needs a real management cluster (--backend apiserver or kubeconfig); the embedded backend always runs the testbed's own Cluster API\n`);
    return 2;
  }
  if (backendName === 'embedded' && provider !== 'embedded') {
    write(`error: --provider ${provider} needs a real management cluster the outside provider can reach (--backend apiserver or kubeconfig)\n`);
    return 2;
  }
  const externalOnly = ['external-dir', 'cloud-port', 'provider-log', 'provider-health', 'provider-wait', 'external-ready-file', 'provider-stop-wait'] as const;
  const misplaced = externalOnly.filter((f) => o[f] !== undefined);
  // --provider in-cluster: the run follows the Deployment's log into --provider-log and waits --provider-wait for it.
  const inClusterToo: readonly string[] = ['provider-log', 'provider-wait'];
  const wrong = misplaced.filter((f) => !(provider === 'external' || (provider === 'in-cluster' && inClusterToo.includes(f))));
  if (wrong.length) {
    write(`error: --${wrong[0]} goes with --provider external${inClusterToo.includes(wrong[0]!) ? ' or in-cluster' : ''}\n`);
    return 2;
  }
  if (provider === 'in-cluster' && backendName !== 'kubeconfig') {
    write(`error: --provider in-cluster goes with --backend kubeconfig (the provider is a Deployment in that cluster: hcs-testbed kind up --managers in-cluster)\n`);
    return 2;
  }
  let speed: number | undefined;
  if (o.speed !== undefined) {
    speed = Number(o.speed);
    if (o.speed.trim() === '' || !Number.isFinite(speed) || speed <= 0 || speed > 10_000) {
      write(`error: --speed must be a number above 0 and at most 10000 (virtual seconds per wall second), got "${o.speed}"\n`);
      return 2;
    }
    if (capi === 'embedded' && provider === 'embedded') {
      write('error: --speed goes with --capi external|upstream or --provider external (otherwise time is virtual and jumps)\n');
      return 2;
    }
  }
  let cloudPort: number | undefined;
  if (o['cloud-port'] !== undefined) {
    cloudPort = Number(o['cloud-port']);
    if (!/^\d+$/.test(o['cloud-port']) || cloudPort > 65535) {
      write(`error: --cloud-port must be a port number, got "${o['cloud-port']}"\n`);
      return 2;
    }
  }
  let providerWaitMs: number | undefined;
  let providerStopWaitMs: number | undefined;
  for (const [flag, set] of [['provider-wait', (v: number) => (providerWaitMs = v)], ['provider-stop-wait', (v: number) => (providerStopWaitMs = v)]] as const) {
    const v = o[flag];
    if (v === undefined) continue;
    try {
      set(parseDuration(v));
    } catch (e) {
      write(`error: --${flag}: ${errorMessage(e)}\n`);
      return 2;
    }
  }

  // Worker processes build their own embedded testbeds: a backend given by the caller (deps, tests) runs in this process only.
  const jobs = o.jobs === undefined ? (backendName === 'embedded' && !deps.openBackend && !conformance ? defaultJobs() : 1) : Number(o.jobs);
  if (!Number.isInteger(jobs) || jobs < 1) {
    write(`error: --jobs must be an integer >= 1, got "${o.jobs}"\n`);
    return 2;
  }
  if ((backendName !== 'embedded' || deps.openBackend) && jobs > 1) {
    write(`error: --jobs above 1 goes with the default embedded backend (got --backend ${backendName}${deps.openBackend ? ', opened by the caller' : ''})\n`);
    return 2;
  }
  if (conformance && jobs > 1) {
    write('error: --jobs above 1 goes with run (a conformance run holds one provider to the contract, in this process)\n');
    return 2;
  }
  if (backendName !== 'embedded' && o.plugin !== undefined) {
    write(`error: --plugin goes with --backend embedded (got --backend ${backendName})\n`);
    return 2;
  }
  // Every file is checked and every error printed (validate and run refuse the same input, exit 2).
  const scenarios: Scenario[] = [];
  let files: string[];
  try {
    files = scenarioFiles(parsed.positionals);
  } catch (e) {
    write(`error: ${errorMessage(e)}\n`);
    return 2;
  }
  if (o.manifests?.length) process.env.HCS_TESTBED_MANIFESTS = o.manifests.map((d) => resolve(d)).join(':'); // for --jobs workers
  // --jobs: the workers start now, while this process reads and checks the files (each takes ~0.3 s to start;
  // bench/explore.ts). Closed on every way out; runParallel uses them.
  const pool = command === 'run' && !conformance && jobs > 1 && files.length > 1 && o.plugin === undefined ? new WorkerPool({ jobs: Math.min(jobs, files.length), stallMs: SCENARIO_STALL_MS }) : undefined;
  try {
    const loadOpts = o.manifests?.length ? { manifestDirs: o.manifests } : {};
    let errors = 0;
    for (const f of files) {
      try {
        scenarios.push(loadScenario(relative(process.cwd(), resolve(f)) || f, undefined, loadOpts));
      } catch (e) {
        const list = e instanceof ScenarioErrors ? e.errors : [e];
        // The first MAX_PRINTED_ERRORS are printed, the rest counted (100,000 unknown keys are not 100,000 lines).
        for (const x of list.slice(0, Math.max(0, MAX_PRINTED_ERRORS - errors))) write(`error: ${errorMessage(x)}\n`);
        errors += list.length + (e instanceof ScenarioErrors ? e.more : 0);
      }
    }
    if (errors) {
      if (errors > MAX_PRINTED_ERRORS) write(`… and ${errors - MAX_PRINTED_ERRORS} more error${errors - MAX_PRINTED_ERRORS === 1 ? '' : 's'} not shown (the first ${MAX_PRINTED_ERRORS} are above)\n`);
      write(`${errors} error${errors === 1 ? '' : 's'} in ${files.length - scenarios.length} of ${files.length} scenario file${files.length === 1 ? '' : 's'}\n`);
      return 2;
    }
    if (command === 'validate') {
      for (const s of scenarios) write(`ok ${s.file}: ${s.name}, ${s.steps.length} steps, rules ${s.rules.join(' ') || '-'}\n`);
      return 0;
    }

    const color = !o['no-color'] && !!process.stdout.isTTY && !process.env.NO_COLOR;
    const reporter = new ConsoleReporter({ write, verbose: !!o.verbose, color });
    let backend: OpenBackend;
    if (backendName === 'apiserver') write('backend: starting kube-apiserver + etcd, installing CRDs and the admission webhook…\n');
    else if (backendName === 'kubeconfig') write('backend: installing CRDs on the management cluster…\n');
    try {
      backend = await (deps.openBackend ?? openBackend)({
        backend: backendName as BackendName,
        ...(o.kubeconfig !== undefined ? { kubeconfig: o.kubeconfig } : {}),
        ...(o.context !== undefined ? { context: o.context } : {}),
        ...(o['webhook-host'] !== undefined ? { webhookHost: o['webhook-host'] } : {}),
        ...(o['no-webhook'] ? { webhook: false } : {}),
        capi: capi as CapiMode,
        provider: provider as ProviderMode,
        ...(speed !== undefined ? { speed } : {}),
        ...(o['external-dir'] !== undefined ? { externalDir: o['external-dir'] } : {}),
        ...(cloudPort !== undefined ? { cloudPort } : {}),
        ...(o['provider-log'] !== undefined ? { providerLog: o['provider-log'] } : {}),
        ...(o['provider-health'] !== undefined ? { providerHealth: o['provider-health'] } : {}),
        ...(providerWaitMs !== undefined ? { providerWaitMs } : {}),
        ...(providerStopWaitMs !== undefined ? { providerStopWaitMs } : {}),
        ...(o['external-ready-file'] !== undefined ? { externalReadyFile: o['external-ready-file'] } : {}),
        ...(provider !== 'embedded' ? { log: (line: string) => write(`${line}\n`) } : {}),
      });
    } catch (e) {
      write(`error: --backend ${backendName}: ${errorMessage(e)}\n`);
      return 2;
    }
    if (backendName !== 'embedded') write(`backend: ${backend.description}\n`);
    if (backend.external) {
      const x = backend.external.info;
      write(`external provider: start it with\n  set -a; . ${backend.external.envFile}; set +a\n  hcs-testbed provider   # everything from provider.env: cloud, AK/SK, kubeconfig, HCS_HEALTH_ADDR, HCS_STOP_FILE\n  (cloud ${x.cloudUrl}, project ${x.projectId}, region ${x.region}, kubeconfig ${x.kubeconfig}, health ${x.healthAddr}; ready marker ${backend.external.readyFile})\n`);
    }
    try {
      if (o.plugin !== undefined) backend = { ...backend, factory: embeddedFactory(await loadPlugin(o.plugin)) };
    } catch (e) {
      write(`error: --plugin: ${errorMessage(e)}\n`);
      await backend.close();
      return 2;
    }
    try {
      return await runAll(seeds > 1 ? sweep(scenarios, seeds) : scenarios, backend, { write, reporter, seed, reports, conformance, verbose: !!o.verbose, out: o.out ?? 'out', requireCoverage: !!o['require-coverage'], wholeLibrary: isWholeLibrary(files), jobs, ...(o.plugin !== undefined ? { plugin: o.plugin } : {}), ...(pool ? { pool } : {}) });
    } finally {
      await backend.close();
    }
  } finally {
    await pool?.close();
  }
}

/** One scenario; whatever it throws becomes a failed result, so one crash never stops the others. */
async function runOne(s: Scenario, backend: OpenBackend, seed: number | undefined, reporter: ConsoleReporter, conformance: boolean): Promise<ScenarioResult> {
  const wall0 = performance.now();
  try {
    return await runScenario(s, backend.factory, {
      ...(seed !== undefined ? { seed } : {}),
      prepare: armScenarioSchedule,
      ...(conformance ? { conformance } : {}),
      onStep: (phase, _step, res) => {
        if (phase === 'end' && res) reporter.stepEnd(res);
      },
      onProgress: (t, summary) => reporter.progress(t, summary),
    });
  } catch (e) {
    const r = crashedResult(s, seed, errorMessage(e), e instanceof InputError, performance.now() - wall0);
    reporter.stepEnd(r.steps[0]!);
    return r;
  }
}

/** The result of a scenario whose run threw (here or in a --jobs worker). */
function crashedResult(s: Scenario, seed: number | undefined, message: string, input: boolean, wallMs: number): ScenarioResult {
  const step = { index: 0, kind: 'expect' as const, title: 'runner', line: 0, ok: false, startMs: 0, endMs: 0, detail: [], error: `internal error: ${message}`, rules: [], ...(input ? { inputError: true } : {}) };
  return { scenario: s, seed: seed ?? s.seed, ok: false, steps: [step], events: [], virtualMs: 0, wallMs, rulesExercised: [], violations: [] };
}

async function runAll(
  scenarios: Scenario[],
  backend: OpenBackend,
  o: { write: (s: string) => void; reporter: ConsoleReporter; seed: number | undefined; reports: string[]; conformance: boolean; verbose: boolean; out: string; requireCoverage: boolean; wholeLibrary: boolean; jobs: number; plugin?: string; pool?: WorkerPool },
): Promise<number> {
  const { write, reporter, seed, reports } = o;
  const results: ScenarioResult[] = [];
  if (o.jobs > 1 && scenarios.length > 1) {
    // src/harness/cli/jobs.ts: the same console output, in list order, once each scenario and those before it are done.
    await runParallel(scenarios, { jobs: o.jobs, ...(seed !== undefined ? { seed } : {}), ...(o.plugin ? { plugin: o.plugin } : {}), ...(o.pool ? { pool: o.pool } : {}) }, (i, out) => {
      const s = scenarios[i]!;
      const effectiveSeed = seed ?? s.seed;
      reporter.scenarioStart(s, effectiveSeed);
      if (out.retried !== undefined) write(`  note: the first run on a worker gave no verdict (${out.retried}); this is the run on a fresh start\n`);
      const r = 'error' in out ? crashedResult(s, seed, out.error, out.input, 0) : out.result;
      for (const st of r.steps) reporter.stepEnd(st);
      reporter.scenarioEnd(r);
      results.push(r);
    });
  }
  for (const s of o.jobs > 1 && scenarios.length > 1 ? [] : scenarios) {
    const effectiveSeed = seed ?? s.seed;
    reporter.scenarioStart(s, effectiveSeed);
    const r = await runOne(s, backend, seed, reporter, o.conformance);
    reporter.scenarioEnd(r);
    results.push(r);
  }
  // Reports are always written, whatever happened to the scenarios; a writer that fails says so and the others still run.
  const coverage = specCoverage(results);
  const writers: [string, () => string[]][] = [
    ['json', () => writeJsonReports(o.out, results)],
    ['junit', () => [writeJunit(o.out, results)]],
    ['html', () => [writeHtml(o.out, results, o.wholeLibrary ? coverage : undefined)]],
  ];
  let writeFailed = false;
  for (const [name, fn] of writers) {
    if (!reports.includes(name)) continue;
    try {
      for (const f of fn()) write(`wrote ${f}\n`);
    } catch (e) {
      writeFailed = true;
      write(`error: writing the ${name} report failed: ${errorMessage(e)}\n`);
    }
  }
  reporter.summary(results);
  if (o.conformance) write(`\n${conformanceText(conformanceTable(results), { verbose: o.verbose })}`);
  // The rules a run did not exercise mean something only for the whole library (a single file exercises a few on purpose).
  if (o.wholeLibrary && !o.conformance) write(coverageText(coverage));
  if (o.requireCoverage && coverage.uncovered.length) {
    write(`error: --require-coverage: ${coverage.uncovered.length} SPEC rules are not exercised by any passing scenario: ${coverage.uncovered.map((u) => u.id).join(' ')}\n`);
    return 1;
  }
  if (results.every((r) => r.ok)) return writeFailed ? 1 : 0;
  return results.some((r) => r.steps.some((s) => s.inputError)) ? 2 : 1;
}

const isMain = process.argv[1] && resolve(process.argv[1]).replace(/\.[cm]?[jt]s$/, '') === resolve(new URL(import.meta.url).pathname).replace(/\.[cm]?[jt]s$/, '');
if (isMain) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      process.stderr.write(`internal error: ${(e as Error).stack ?? String(e)}\n`);
      process.exit(1);
    },
  );
}
