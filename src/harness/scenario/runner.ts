import { dirname } from 'node:path';
import { errorMessage, InputError } from '../../core/errors.js';
import type { EventLog, LogEvent } from '../../core/events.js';
import type { VirtualClock } from '../../core/clock.js';
import { runKubectl } from '../kubectl/index.js';
import { runRealKubectl } from './real-kubectl.js';
import { applyError, applyObject, inlineManifest, loadManifestPath, type Manifest } from '../manifests/index.js';
import type { Simulation } from '../../core/runtime/simulation.js';
import type { KubeObject } from '../../core/kube/types.js';
import { CHECKS, describeCheck, type CheckResult } from './checks.js';
import type { CheckSpec, CloudAction, Scenario, Step } from './types.js';
import { InvariantMonitor, type SkippedFinding, type Violation } from './invariants.js';
import { kubectlTier } from './contract.js';
import { explainFailure, guestBlockers } from './explain.js';
import type { World } from './world.js';

/** A running testbed as the scenario runner needs it. */
export interface TestbedHandle {
  world: World;
  sim: Simulation;
  clock: VirtualClock;
  events: EventLog;
  /** The testbed starts from a captured state (a replay), not empty: the invariants take it as their baseline. */
  resumed?: boolean;
  /**
   * A provider in a process of its own stamps times (lastTransitionTime) with its wall clock, which may run ahead
   * of this run's clock: how far ahead a stamp may be (default 0: one clock for all, the embedded provider).
   */
  stampSkewMs?: number;
  close(): Promise<void>;
}

/** A fresh testbed for a run; `scenario`: the one about to run (its `from:` bundle, issue 35, is the factory's to load or refuse). */
export type TestbedFactory = (seed: number, scenario?: Scenario) => Promise<TestbedHandle>;

export interface StepResult {
  index: number;
  kind: Step['kind'];
  title: string;
  line: number;
  ok: boolean;
  /** Virtual times (ms since the scenario started). */
  startMs: number;
  endMs: number;
  /** Lines worth showing (check verdicts, command output). */
  detail: string[];
  /** State of the world when the step ended: machines by phase, servers, nodes (shown live on the console). */
  summary?: string;
  error?: string;
  /** Wall-clock milliseconds the step took (the reports' JUnit `time`). */
  wallMs?: number;
  /** The failure comes from bad input (a manifest or scenario field), not from the system under test. */
  inputError?: boolean;
  rules: string[];
  /** Conformance mode: the reference checks of this step that were skipped (or run as their contract core). */
  skipped?: SkippedCheck[];
}

/** A reference check a conformance run did not hold the provider to. */
export interface SkippedCheck {
  /** The check as written, e.g. events(type=event.NoFreePoolEntry rule=MD-3). */
  check: string;
  why: string;
  /** The contract core that was run instead, when there is one. */
  core?: string;
}

export interface ScenarioResult {
  scenario: Scenario;
  seed: number;
  ok: boolean;
  steps: StepResult[];
  events: readonly LogEvent[];
  /** Virtual duration of the run. */
  virtualMs: number;
  wallMs: number;
  /** Rule IDs exercised by steps that passed (header rules count once the whole scenario passed). */
  rulesExercised: string[];
  /** Invariant violations seen during the run (expected ones included). */
  violations: Violation[];
  /** Conformance mode: reference invariant findings that were not counted. */
  skippedInvariants?: SkippedFinding[];
}

export interface RunOptions {
  /** Override the scenario's seed. */
  seed?: number;
  /** Called when a step starts and when it ends. */
  onStep?: (phase: 'start' | 'end', step: Step, result?: StepResult) => void;
  /** Called during long waits, at most every `progressEveryMs` of wall time, with the world summary and virtual time. */
  onProgress?: (virtualMs: number, summary: string) => void;
  progressEveryMs?: number;
  /**
   * Called once the testbed is up, before the first step: what the caller arms on it — the explorer's fault and crash
   * schedule (src/harness/explore/schedule.ts armSchedule, for `scenario.schedule`). A scenario that carries a schedule and
   * is run without one fails at its first step instead of running unarmed.
   */
  prepare?: (tb: TestbedHandle, scenario: Scenario) => void;
  /**
   * Conformance mode (`hcs-testbed conformance`): hold the provider to the contract only. Reference checks
   * (src/harness/scenario/contract.ts) are skipped, or run as their contract core, and recorded in StepResult.skipped;
   * reference invariant findings are set aside (ScenarioResult.skippedInvariants).
   */
  conformance?: boolean;
  /**
   * Continuous invariants left out of this run, by name (observables.ts INVARIANTS: 'pool-status',
   * 'control-plane-nodes', 'cp-placement', 'node-server'): a negative test of one statement sets aside another
   * that would catch its planted bug first.
   */
  invariantsOff?: string[];
}

/** The extra step every run ends with once all written steps passed (counted as a step by every report). */
export const AT_REST_TITLE = 'invariants at rest (no orphan servers or volumes, DISK-9, POOL-4, TPL-4, BOOT-4)';

/** The title of a step as the reports show it (its `name`, else generated from its action). */
export function stepTitle(s: Step): string {
  if (s.name) return s.name;
  switch (s.kind) {
    case 'apply': return `apply ${[...s.files.map((f) => f.split('/').slice(-2).join('/')), ...(s.inline.length ? [`${s.inline.length} inline`] : [])].join(', ')}`;
    case 'kubectl': return `${s.real ? '[real] ' : ''}${s.command.replace(/\s*\\\n\s*/g, ' ').replace(/\s+/g, ' ').trim()}`;
    case 'wait': return `wait ${s.checks.map((c) => describeCheck(c.type, c.params)).join(', ')}`;
    case 'expect': return `expect ${s.checks.map((c) => describeCheck(c.type, c.params)).join(', ')}`;
    case 'write': return `write ${s.path} on ${s.hostnames.join(', ')}`;
    case 'advance': return `advance ${s.ms / 1000}s`;
    case 'fault': return 'add' in s.action ? `fault ${String(s.action.add.service)}.${String(s.action.add.operation)} ${JSON.stringify(s.action.add.effect)}` : 'clear' in s.action ? 'fault: clear all rules' : `fault: release stuck transitions${s.action.release === true ? '' : ` of ${s.action.release}`}`;
    case 'crash': return `crash ${s.controllers.join(', ')}${s.downForMs ? ` for ${s.downForMs / 1000}s` : ''}`;
    case 'edit': return `edit ${s.target.kind.toLowerCase()} ${s.target.name}: ${Object.keys(s.set).join(', ')}`;
    case 'read': return `read ${s.path} on ${s.hostname}`;
    case 'server': return `${s.action} the server of ${s.hostname}`;
    case 'cloud': return `cloud: ${cloudTitle(s.action)}`;
  }
}

async function evaluate(world: World, checks: CheckSpec[]): Promise<{ ok: boolean; results: { check: CheckSpec; res: CheckResult }[] }> {
  const results = [];
  for (const check of checks) {
    const def = CHECKS[check.type]!;
    let res: CheckResult;
    try {
      res = await def.run(world, check.params);
    } catch (e) {
      res = { ok: false, detail: `check failed to run: ${errorMessage(e)}` };
    }
    results.push({ check, res });
  }
  return { ok: results.every((r) => r.res.ok), results };
}

function verdictLines(results: { check: CheckSpec; res: CheckResult }[]): string[] {
  return results.map(({ check, res }) => `${res.ok ? '✓' : '✗'} ${describeCheck(check.type, check.params)}: ${res.detail}`);
}

/** Replay one scenario on a fresh testbed. Never throws for scenario failures; returns the verdict. */
export async function runScenario(scenario: Scenario, factory: TestbedFactory, opts: RunOptions = {}): Promise<ScenarioResult> {
  const seed = opts.seed ?? scenario.seed;
  const wall0 = performance.now();
  let tb: TestbedHandle;
  try {
    tb = await factory(seed, scenario);
  } catch (e) {
    // The runner never dies: a testbed that cannot start is a failed first step with its reason.
    const res: StepResult = { index: 0, kind: 'expect', title: 'start the testbed', line: 0, ok: false, startMs: 0, endMs: 0, detail: [], error: `the testbed did not start: ${errorMessage(e)}`, rules: [] };
    opts.onStep?.('end', { kind: 'expect', index: 0, line: 0, checks: [] }, res);
    return { scenario, seed, ok: false, steps: [res], events: [], virtualMs: 0, wallMs: performance.now() - wall0, rulesExercised: [], violations: [] };
  }
  const t0 = tb.clock.now();
  const rel = (): number => tb.clock.now() - t0;
  const steps: StepResult[] = [];
  const exercised = new Set<string>();
  const monitor = new InvariantMonitor(tb.world, () => tb.events.all(), { contractOnly: !!opts.conformance, ...(tb.resumed ? { fromSnapshot: true } : {}), ...(tb.stampSkewMs ? { stampSkewMs: tb.stampSkewMs } : {}), ...(opts.invariantsOff?.length ? { off: opts.invariantsOff } : {}) });
  // A replayed run's history carries the violations already seen (src/harness/capture/replay.ts).
  for (const e of tb.events.all()) {
    if (e.source === 'invariant' && typeof e.data?.key === 'string') monitor.remember({ rule: e.rules?.[0] ?? '', key: e.data.key, message: e.message, at: e.t });
  }
  const expected = new Set(scenario.expectViolations);
  /** Record new violations in the log; return the unexpected ones. */
  const noteViolations = (fresh: Violation[]): Violation[] => {
    for (const v of fresh) {
      tb.events.record({
        source: 'invariant',
        type: expected.has(v.rule) ? 'invariant.expected-violation' : 'invariant.violation',
        message: `${v.rule}: ${v.message}${v.cause ? ` (after event #${v.causeSeq}: ${v.cause})` : ''}`,
        rules: [v.rule],
        data: { key: v.key, ...(v.causeSeq ? { causeSeq: v.causeSeq } : {}), ...(v.causeStep ? { causeStep: v.causeStep } : {}) },
      });
    }
    return fresh.filter((v) => !expected.has(v.rule));
  };
  let lastProgress = performance.now();
  const progress = async (): Promise<void> => {
    if (!opts.onProgress || performance.now() - lastProgress < (opts.progressEveryMs ?? 2000)) return;
    lastProgress = performance.now();
    opts.onProgress(rel(), await worldSummary(tb.world));
  };
  let current = 0;
  const action = (message: string, data: Record<string, unknown> = {}): void => {
    tb.events.record({ source: 'scenario', type: 'step.action', message: `step ${current}: ${message}`, data: { step: current, ...data } });
  };
  const ctx: StepContext = { monitor, noteViolations, progress, action, conformance: !!opts.conformance };
  let ok = true;
  try {
    tb.events.record({ source: 'scenario', type: 'scenario.start', message: `scenario ${scenario.name} (seed ${seed})`, data: { seed } });
    if (opts.prepare) opts.prepare(tb, scenario);
    else if (scenario.schedule?.length) throw new Error(`the scenario carries a schedule of ${scenario.schedule.length} item(s) (written by explore) but this run does not arm it (RunOptions.prepare)`);
    for (const step of scenario.steps) {
      current = step.index;
      opts.onStep?.('start', step);
      const start = rel();
      const wallStart = performance.now();
      const stepSeq = tb.events.size() + 1;
      tb.events.record({ source: 'scenario', type: 'step.start', message: `step ${step.index}: ${stepTitle(step)}`, data: { step: step.index } });
      const res: StepResult = { index: step.index, kind: step.kind, title: stepTitle(step), line: step.line, ok: true, startMs: start, endMs: start, detail: [], rules: step.rules ?? [] };
      try {
        await runStep(step, tb, res, scenario, ctx);
        const bad = noteViolations(await monitor.check());
        if (bad.length) throw new Error(violationText(bad));
      } catch (e) {
        res.ok = false;
        res.error = errorMessage(e);
        if (e instanceof InputError) res.inputError = true;
      }
      res.endMs = rel();
      if (!res.ok && !res.inputError) res.detail.push(...(await explainFailure(tb.world, tb.events.all(), stepSeq).catch((e: unknown) => [`(no explanation: ${errorMessage(e)})`])));
      if (step.kind === 'wait' || step.kind === 'advance' || !res.ok) res.summary = await worldSummary(tb.world).catch((e: unknown) => `(no summary: ${errorMessage(e)})`);
      res.wallMs = performance.now() - wallStart;
      tb.events.record({
        source: 'scenario',
        type: res.ok ? 'step.pass' : 'step.fail',
        message: `step ${step.index} ${res.ok ? 'passed' : 'FAILED'}: ${res.title}${res.error ? ` — ${res.error}` : ''}`,
        data: { step: step.index },
        ...(res.rules.length ? { rules: res.rules } : {}),
      });
      steps.push(res);
      opts.onStep?.('end', step, res);
      if (!res.ok) {
        ok = false;
        break;
      }
      for (const r of res.rules) exercised.add(r);
    }
    if (ok) {
      const start = rel();
      const wallStart = performance.now();
      const res: StepResult = { index: scenario.steps.length + 1, kind: 'expect', title: AT_REST_TITLE, line: 0, ok: true, startMs: start, endMs: start, detail: [], rules: [] };
      let bad: Violation[] = [];
      let crashed: string | undefined;
      try {
        await tb.sim.settle();
        bad = noteViolations(await monitor.checkAtRest());
      } catch (e) {
        crashed = `internal error while checking the invariants at rest: ${errorMessage(e)}`;
      }
      const missing = [...expected].filter((r) => !monitor.all().some((v) => v.rule === r));
      if (crashed) {
        res.ok = false;
        res.error = crashed;
      } else if (bad.length) {
        res.ok = false;
        res.error = violationText(bad);
      } else if (missing.length) {
        res.ok = false;
        res.error = `the scenario expects violations of ${missing.join(', ')}, but none occurred`;
      }
      res.detail.push(...monitor.all().map((v) => `${expected.has(v.rule) ? '! expected' : '✗'} ${v.rule}: ${v.message}`));
      res.wallMs = performance.now() - wallStart;
      steps.push(res);
      opts.onStep?.('end', { kind: 'expect', index: res.index, line: 0, checks: [] }, res);
      ok = res.ok;
    }
    if (ok) for (const r of scenario.rules) exercised.add(r);
  } catch (e) {
    // Anything that escapes a step (the invariants at rest, a summary, a settle) fails the run at that point, with its reason.
    ok = false;
    const at = rel();
    const res: StepResult = { index: (steps.at(-1)?.index ?? 0) + (steps.at(-1)?.ok === false ? 0 : 1), kind: 'expect', title: 'runner', line: 0, ok: false, startMs: at, endMs: at, detail: [], error: `internal error: ${errorMessage(e)}`, rules: [] };
    steps.push(res);
    tb.events.record({ source: 'scenario', type: 'step.fail', message: `runner FAILED: ${res.error}` });
    opts.onStep?.('end', { kind: 'expect', index: res.index, line: 0, checks: [] }, res);
  }
  tb.events.record({ source: 'scenario', type: ok ? 'scenario.pass' : 'scenario.fail', message: `scenario ${scenario.name} ${ok ? 'passed' : 'FAILED'}` });
  try {
    await tb.close();
  } catch (e) {
    tb.events.record({ source: 'scenario', type: 'testbed.close-failed', message: `closing the testbed failed: ${errorMessage(e)}` });
  }
  return {
    scenario, seed, ok, steps, events: tb.events.all(), virtualMs: rel(), wallMs: performance.now() - wall0, rulesExercised: [...exercised].sort(), violations: monitor.all(),
    ...(opts.conformance ? { skippedInvariants: monitor.skippedReference() } : {}),
  };
}

/** "machines Running 4, Provisioning 1 · servers ACTIVE 4 · volumes 8" — what a person watching wants to see. */
async function worldSummary(world: World): Promise<string> {
  const count = (xs: (string | undefined)[]): string =>
    [...xs.reduce((m, x) => m.set(x ?? 'Pending', (m.get(x ?? 'Pending') ?? 0) + 1), new Map<string, number>())]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
  const machines = await world.mgmt.list<KubeObject & { status?: { phase?: string } }>('Machine');
  const servers = world.cloud.listServers().filter((x) => x.status !== 'DELETED');
  const volumes = world.cloud.listVolumes().filter((v) => v.status !== 'deleted');
  return `machines ${machines.length ? count(machines.map((m) => m.status?.phase)) : 'none'} · servers ${servers.length ? count(servers.map((x) => x.status)) : 'none'} · volumes ${volumes.length}`;
}

interface StepContext {
  monitor: InvariantMonitor;
  /**
   * Record what a step did to the system (source scenario, type step.action, data.step): scripted edits, kubectl
   * commands, applies, faults, crashes and writes are causes like any controller's, so a violation they bring
   * about is blamed on the step (issue 14). The message names what it touched (object names, hostnames, ids).
   */
  action(message: string, data?: Record<string, unknown>): void;
  noteViolations(fresh: Violation[]): Violation[];
  /** Report progress during long waits (throttled on wall time; records nothing in the event log). */
  progress(): Promise<void>;
  /** Conformance mode: contract checks only (RunOptions.conformance). */
  conformance: boolean;
}

/** Conformance mode: the checks to run (contract ones, and the contract cores of reference ones); the rest noted in res.skipped. */
function contractChecks(checks: CheckSpec[], res: StepResult): CheckSpec[] {
  const out: CheckSpec[] = [];
  for (const c of checks) {
    const t = CHECKS[c.type]!.tier(c.params);
    if (t.tier === 'contract') {
      out.push(c);
      continue;
    }
    const skip: SkippedCheck = { check: describeCheck(c.type, c.params), why: t.why ?? 'reference' };
    if (t.core) {
      out.push({ ...c, params: t.core });
      skip.core = describeCheck(c.type, t.core);
    }
    (res.skipped ??= []).push(skip);
    res.detail.push(`~ skipped (reference): ${skip.check} — ${skip.why}${skip.core ? `; ran its contract core ${skip.core}` : ''}`);
  }
  return out;
}

function violationText(vs: Violation[]): string {
  return `invariant violated: ${vs.map((v) => `${v.rule}: ${v.message}${v.cause ? ` (caused by ${v.causeStep ? `step ${v.causeStep}, ` : ''}event #${v.causeSeq}: ${v.cause})` : ''}`).join('; ')}`;
}

async function runStep(step: Step, tb: TestbedHandle, res: StepResult, scenario: Scenario, ctx: StepContext): Promise<void> {
  const world = tb.world;
  switch (step.kind) {
    case 'apply': {
      const manifests: Manifest[] = [
        ...step.files.flatMap((f) => loadManifestPath(f)),
        ...step.inline.map((o) => inlineManifest(o, scenario.file, step.line)),
      ];
      try {
        for (const m of manifests) {
          try {
            const r = await applyObject(world.mgmt, m.obj);
            res.detail.push(`${m.obj.kind.toLowerCase()}/${m.obj.metadata.name} ${r.action}`);
            ctx.action(`apply ${m.obj.kind} ${m.obj.metadata.namespace ? `${m.obj.metadata.namespace}/` : ''}${m.obj.metadata.name}: ${r.action}`, { kind: m.obj.kind, name: m.obj.metadata.name, action: r.action });
          } catch (e) {
            throw applyError(m, e);
          }
        }
      } catch (e) {
        if (step.expectError && errorMessage(e).includes(step.expectError)) {
          res.detail.push(`rejected as expected: ${errorMessage(e)}`);
          await tb.sim.settle();
          return;
        }
        throw e;
      }
      if (step.expectError) throw new Error(`expected the apply to be rejected with "${step.expectError}", but it was accepted`);
      await tb.sim.settle();
      return;
    }
    case 'kubectl': {
      let out;
      if (step.real) {
        if (!world.kubeconfig) throw new InputError('this backend serves no API for the real kubectl; drop "real: true"', scenario.file, step.line, 'real');
        out = await runRealKubectl(step.command, { kubeconfig: await world.kubeconfig(), cwd: dirname(scenario.file) });
        await world.sync?.();
      } else {
        out = await runKubectl(step.command, {
          mgmt: world.mgmt,
          workloads: world.workloads,
          clock: world.clock,
          logs: (d) => world.controllerLog(d),
          cwd: dirname(scenario.file),
        });
      }
      res.detail.push(...(out.stdout + out.stderr).split('\n').filter(Boolean));
      const line = step.command.replace(/\s*\\\n\s*/g, ' ').replace(/\s+/g, ' ').trim();
      ctx.action(`${step.real ? '[real] ' : ''}${line} (exit ${out.code})`, { exit: out.code });
      if (step.expectError) {
        if (out.code === 0) throw new Error(`expected kubectl to fail with "${step.expectError}", but it succeeded`);
        if (!out.stderr.includes(step.expectError)) throw new Error(`kubectl failed, but not with "${step.expectError}": ${out.stderr.trim()}`);
      } else if (out.code !== 0) throw new Error(out.stderr.trim());
      const expects = !!step.expectOutput?.length || step.expectWords !== undefined;
      const tier = ctx.conformance && expects ? kubectlTier(step.command, true) : undefined;
      if (tier?.tier === 'reference') {
        const skip: SkippedCheck = { check: step.expectOutput?.length ? `expectOutput ${JSON.stringify(step.expectOutput)}` : `expectWords ${JSON.stringify(step.expectWords)}`, why: tier.why ?? 'reference' };
        (res.skipped ??= []).push(skip);
        res.detail.push(`~ skipped (reference): ${skip.check} — ${skip.why}`);
      } else {
        for (const want of step.expectOutput ?? []) {
          if (!out.stdout.includes(want)) throw new Error(`output does not contain ${JSON.stringify(want)}`);
        }
        if (step.expectWords) {
          const words = wordsDiff(out.stdout, step.expectWords);
          if (words) throw new Error(`output words ${words}`);
        }
      }
      await tb.sim.settle();
      return;
    }
    case 'wait': {
      const checks = ctx.conformance ? contractChecks(step.checks, res) : step.checks;
      let last: Awaited<ReturnType<typeof evaluate>> | undefined;
      let violated: Violation[] = [];
      const r = await tb.sim.runUntil(async () => {
        violated = ctx.noteViolations(await ctx.monitor.check());
        if (violated.length) return true;
        last = await evaluate(world, checks);
        return last.ok;
      }, step.timeoutMs, () => ctx.progress());
      res.detail.push(...verdictLines(last?.results ?? []));
      if (violated.length) throw new Error(violationText(violated));
      if (!r.ok) {
        // Name what blocks the wait in the error itself (issue 22): a guest that could not join says why, with its rule.
        const blocked = guestBlockers(world, tb.events.all());
        throw new Error(`timed out after ${step.timeoutMs / 1000}s of virtual time: ${last?.results.filter((x) => !x.res.ok).map((x) => `${x.check.type}: ${x.res.detail}`).join('; ')}${blocked.length ? `; blocked by ${blocked.join('; ')}` : ''}`);
      }
      return;
    }
    case 'expect': {
      await tb.sim.settle();
      const r = await evaluate(world, ctx.conformance ? contractChecks(step.checks, res) : step.checks);
      res.detail.push(...verdictLines(r.results));
      if (!r.ok) throw new Error(r.results.filter((x) => !x.res.ok).map((x) => `${x.check.type}: ${x.res.detail}`).join('; '));
      return;
    }
    case 'write': {
      for (const hostname of step.hostnames) {
        const content = step.content.replaceAll('{hostname}', hostname);
        const mounts = world.guests.mounts(hostname);
        if (mounts.length === 0) throw new InputError(`no running node with hostname "${hostname}" to write to`, scenario.file, step.line, 'write.hostnames');
        world.guests.writeFile(hostname, step.path, content);
        const mount = mounts.filter((m) => step.path === m.mountPath || step.path.startsWith(m.mountPath.endsWith('/') ? m.mountPath : m.mountPath + '/')).sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
        if (!mount) throw new Error(`node ${hostname} has no mount for ${step.path}`);
        world.markers.push({ hostname, path: step.path, content, volumeId: mount.volumeId, persistent: mount.persistent, mountPath: mount.mountPath });
        ctx.action(`write ${hostname}:${step.path} on ${mount.persistent ? 'persistent' : 'ephemeral'} volume ${mount.volumeId}`, { hostname, volumeId: mount.volumeId });
        res.detail.push(`${hostname}:${step.path} on ${mount.persistent ? 'persistent' : 'ephemeral'} volume ${mount.volumeId}`);
      }
      return;
    }
    case 'advance':
      await tb.sim.advance(step.ms);
      return;
    case 'fault': {
      const a = step.action;
      if ('add' in a) {
        let id: string;
        try {
          id = world.faults.add(a.add);
        } catch (e) {
          throw new InputError(errorMessage(e), scenario.file, step.line, 'fault');
        }
        res.detail.push(`fault rule ${id} added`);
        ctx.action(`fault rule ${id} added: ${String(a.add.service)}.${String(a.add.operation)} ${JSON.stringify(a.add.effect)}`, { ruleId: id });
      } else if ('clear' in a) {
        world.faults.clear();
        ctx.action('fault rules cleared');
      } else {
        const n = world.faults.releaseStuck(a.release === true ? undefined : a.release);
        res.detail.push(`${n} stuck transitions released`);
        ctx.action(`${n} stuck transitions released${a.release === true ? '' : ` of ${a.release}`}`);
      }
      await tb.sim.settle();
      return;
    }
    case 'crash': {
      let names: string[];
      try {
        names = world.crash(step.controllers);
      } catch (e) {
        throw new InputError(errorMessage(e), scenario.file, step.line, 'crash.controllers');
      }
      res.detail.push(`crashed ${names.join(', ')}`);
      ctx.action(`crashed ${names.join(', ')}${step.downForMs ? ` for ${step.downForMs / 1000}s` : ''}`, { controllers: names });
      if (step.downForMs) await tb.sim.advance(step.downForMs);
      await world.restart(names);
      ctx.action(`restarted ${names.join(', ')}`, { controllers: names });
      await tb.sim.settle();
      return;
    }
    case 'edit': {
      const { kind, name, namespace } = step.target;
      const cur = await world.mgmt.get<KubeObject>({ kind, namespace, name });
      if (!cur) throw new Error(`${kind} ${namespace}/${name} not found (edit)`);
      const next = structuredClone(cur) as unknown as Record<string, unknown>;
      for (const [path, value] of Object.entries(step.set)) setPath(next, path, value);
      await world.mgmt.update(next as unknown as KubeObject);
      res.detail.push(`${kind.toLowerCase()}/${name} edited`);
      ctx.action(`edit ${kind} ${namespace}/${name}: ${Object.entries(step.set).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')}`, { kind, namespace, name, fields: Object.keys(step.set) });
      await tb.sim.settle();
      return;
    }
    case 'server': {
      if (!world.serverAction) throw new InputError('this backend cannot act on servers; drop the server step', scenario.file, step.line, 'server');
      const hms = await world.mgmt.list<KubeObject & { spec: { serverId?: string }; status?: { hostname?: string } }>('HCSMachine');
      const ids = hms.filter((m) => m.status?.hostname === step.hostname && m.spec.serverId && !m.metadata.deletionTimestamp).map((m) => m.spec.serverId!);
      const live = new Set(world.cloud.listServers().map((x) => x.id));
      const sid = ids.find((id) => live.has(id));
      if (!sid) throw new Error(`no live server serves hostname ${step.hostname} (server.hostname)`);
      const job = world.serverAction(sid, step.action);
      res.detail.push(`${step.action} server ${sid} of ${step.hostname}: job ${job}`);
      ctx.action(`${step.action} server ${sid} of ${step.hostname}`, { hostname: step.hostname, serverId: sid });
      await tb.sim.settle();
      return;
    }
    case 'cloud':
      return cloudStep(step, tb, res, scenario, ctx);
    case 'read': {
      // A hostname no running node has reads nothing: that is the wrong host, not an absent file.
      if (world.guests.mounts(step.hostname).length === 0) throw new Error(`no running node with hostname "${step.hostname}" to read ${step.path} from`);
      const got = world.guests.readFile(step.hostname, step.path);
      if (step.absent) {
        if (got !== undefined) throw new Error(`${step.hostname}:${step.path} exists (${JSON.stringify(got)}), expected it absent`);
      } else if (got === undefined) {
        throw new Error(`${step.hostname}:${step.path} does not exist, expected ${JSON.stringify(step.content)}`);
      } else if (got !== step.content) {
        throw new Error(`${step.hostname}:${step.path} reads ${JSON.stringify(got)}, expected ${JSON.stringify(step.content)}`);
      }
      res.detail.push(`${step.hostname}:${step.path} ${got === undefined ? 'absent' : `= ${JSON.stringify(got)}`}`);
      return;
    }
  }
}

function cloudTitle(a: CloudAction): string {
  if ('createVolume' in a) return `create volume ${a.createVolume.name}`;
  if ('attach' in a) return `attach ${a.attach.volume} to ${a.attach.hostname}`;
  if ('detach' in a) return `detach ${a.detach.volume} from ${a.detach.hostname}`;
  if ('deleteVolume' in a) return `delete volume ${a.deleteVolume}`;
  return 'stop' in a ? `stop the server of ${a.stop}` : `start the server of ${a.start}`;
}

/** The live server serving a pool hostname (through its HCSMachine), or an error naming the field. */
async function serverOfHostname(world: World, hostname: string, field: string): Promise<string> {
  const hms = await world.mgmt.list<KubeObject & { spec: { serverId?: string }; status?: { hostname?: string } }>('HCSMachine');
  const ids = hms.filter((m) => m.status?.hostname === hostname && m.spec.serverId && !m.metadata.deletionTimestamp).map((m) => m.spec.serverId!);
  const live = new Set(world.cloud.listServers().filter((x) => x.status !== 'DELETED').map((x) => x.id));
  const sid = ids.find((id) => live.has(id));
  if (!sid) throw new Error(`no live server serves hostname ${hostname} (${field})`);
  return sid;
}

/** A `cloud` step: an operator's call on the cloud's API, recorded as the step's action (issue 37). */
async function cloudStep(step: Extract<Step, { kind: 'cloud' }>, tb: TestbedHandle, res: StepResult, scenario: Scenario, ctx: StepContext): Promise<void> {
  const world = tb.world;
  const a = step.action;
  const volumeNamed = (name: string, field: string): string => {
    const vs = world.cloud.listVolumes().filter((v) => v.name === name && v.status !== 'deleted' && v.status !== 'deleting');
    if (vs.length !== 1) throw new Error(`${vs.length ? `${vs.length} volumes are` : 'no volume is'} named ${name} (${field})`);
    return vs[0]!.id;
  };
  if ('stop' in a || 'start' in a) {
    if (!world.serverAction) throw new InputError('this backend cannot act on servers; drop the cloud step', scenario.file, step.line, 'cloud');
    const [action, hostname] = 'stop' in a ? (['stop', a.stop] as const) : (['start', a.start] as const);
    const sid = await serverOfHostname(world, hostname, `cloud.${action}`);
    const job = world.serverAction(sid, action);
    res.detail.push(`${action} server ${sid} of ${hostname}: job ${job}`);
    ctx.action(`cloud: ${action} server ${sid} of ${hostname}`, { hostname, serverId: sid });
    await tb.sim.settle();
    return;
  }
  const ops = world.cloudOps;
  if (!ops) throw new InputError('this backend offers no cloud API to act on; drop the cloud step', scenario.file, step.line, 'cloud');
  if ('createVolume' in a) {
    const id = await ops.createVolume(a.createVolume);
    res.detail.push(`created volume ${a.createVolume.name} (${id})`);
    ctx.action(`cloud: created volume ${a.createVolume.name} (${id}) by hand: ${a.createVolume.size} GB ${a.createVolume.type} in ${a.createVolume.availabilityZone}${a.createVolume.metadata ? ` with metadata ${JSON.stringify(a.createVolume.metadata)}` : ''}`, { volumeId: id });
  } else if ('attach' in a || 'detach' in a) {
    const [verb, x] = 'attach' in a ? (['attach', a.attach] as const) : (['detach', a.detach] as const);
    const vid = volumeNamed(x.volume, `cloud.${verb}.volume`);
    const sid = await serverOfHostname(world, x.hostname, `cloud.${verb}.hostname`);
    const job = verb === 'attach' ? await ops.attachVolume(sid, vid) : await ops.detachVolume(sid, vid);
    res.detail.push(`${verb} volume ${x.volume} (${vid}) ${verb === 'attach' ? 'to' : 'from'} server ${sid} of ${x.hostname}: job ${job}`);
    ctx.action(`cloud: ${verb} volume ${x.volume} (${vid}) ${verb === 'attach' ? 'to' : 'from'} server ${sid} of ${x.hostname} by hand`, { volumeId: vid, serverId: sid, hostname: x.hostname });
  } else {
    const vid = volumeNamed(a.deleteVolume, 'cloud.deleteVolume');
    await ops.deleteVolume(vid);
    res.detail.push(`deleted volume ${a.deleteVolume} (${vid})`);
    ctx.action(`cloud: deleted volume ${a.deleteVolume} (${vid}) by hand`, { volumeId: vid });
  }
  await tb.sim.settle();
}

/**
 * Compare the output's whitespace-separated words with `want` as multisets: undefined when equal, else what differs
 * ("[az1 az1 az2] (expected [az1 az1 az1 az2 az2]: missing az1, az2)").
 */
export function wordsDiff(output: string, want: readonly string[]): string | undefined {
  const have = output.split(/\s+/).filter(Boolean).sort();
  const exp = [...want].sort();
  if (have.join('\u0000') === exp.join('\u0000')) return undefined;
  const left = [...have];
  const missing: string[] = [];
  for (const w of exp) {
    const i = left.indexOf(w);
    if (i >= 0) left.splice(i, 1);
    else missing.push(w);
  }
  return `[${have.join(' ')}] (expected [${exp.join(' ')}]${missing.length ? `: missing ${missing.join(', ')}` : ''}${left.length ? `${missing.length ? ';' : ':'} unexpected ${left.join(', ')}` : ''})`;
}

/** Set (or, with null, remove) a dotted field path such as spec.template.spec.version or spec.configs[0].hostname. */
export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.').flatMap((p) => {
    const m = /^([^[]+)((?:\[\d+\])*)$/.exec(p);
    return m ? [m[1]!, ...[...m[2]!.matchAll(/\[(\d+)\]/g)].map((x) => Number(x[1]))] : [p];
  });
  let cur: unknown = obj;
  for (let i = 0; i < parts.length - 1; i++) {
    const k = parts[i]!;
    const c = cur as Record<string | number, unknown>;
    if (c[k] === undefined || c[k] === null) c[k] = typeof parts[i + 1] === 'number' ? [] : {};
    cur = c[k];
    if (typeof cur !== 'object') throw new Error(`edit: ${parts.slice(0, i + 1).join('.')} is not an object`);
  }
  const last = parts[parts.length - 1]!;
  const c = cur as Record<string | number, unknown>;
  if (value === null) {
    if (Array.isArray(c) && typeof last === 'number') c.splice(last, 1);
    else delete c[last];
  } else c[last] = value;
}
