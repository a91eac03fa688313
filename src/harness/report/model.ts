/**
 * The one report model every report (console, JSON, JUnit, HTML) reads, so
 * they all count the same steps (issue 14, "consistent reports").
 *
 * A scenario's steps are the steps as written in its file plus the
 * "invariants at rest" step every run ends with; a step the run never reached
 * (an earlier step failed) is `skipped` and keeps its full title. A failure
 * outside any written step (the testbed did not start, an internal error of
 * the runner) is a failed step of its own at the place it happened.
 */
import { AT_REST_TITLE, stepTitle, type ScenarioResult, type StepResult } from '../scenario/runner.js';
import type { Scenario, Step } from '../scenario/types.js';

export type StepStatus = 'passed' | 'failed' | 'skipped';

export interface ReportStep {
  /** The step's number in its scenario (1-based; the at-rest step is N+1, a failure before step 1 is 0). */
  index: number;
  kind: Step['kind'];
  /** Full title (the step's `name`, else generated from its action), never cut. */
  title: string;
  /** Scenario file and the line where the step is written (1 for steps not written in the file: at rest, runner). */
  file: string;
  line: number;
  status: StepStatus;
  /** Virtual times (ms since the scenario started); absent for a skipped step. */
  startMs?: number;
  endMs?: number;
  /** Virtual and wall milliseconds the step took (0 when skipped). */
  virtualMs: number;
  wallMs: number;
  rules: string[];
  error?: string;
  detail: string[];
  summary?: string;
  inputError?: boolean;
}

export interface StepCounts {
  total: number;
  passed: number;
  failed: number;
  /** Not reached (an earlier step failed). */
  skipped: number;
}

export interface ScenarioReport {
  name: string;
  file: string;
  seed: number;
  ok: boolean;
  virtualMs: number;
  wallMs: number;
  steps: ReportStep[];
  counts: StepCounts;
  /** The command that replays this run. */
  replay: string;
}

/** Steps a scenario's run is made of before it runs: the written ones and the invariants at rest. */
export function plannedSteps(s: Scenario): number {
  return s.steps.length + 1;
}

function fromResult(r: ScenarioResult, res: StepResult, line: number): ReportStep {
  return {
    index: res.index,
    kind: res.kind,
    title: res.title,
    file: r.scenario.file,
    line,
    status: res.ok ? 'passed' : 'failed',
    startMs: res.startMs,
    endMs: res.endMs,
    virtualMs: res.endMs - res.startMs,
    wallMs: res.wallMs ?? 0,
    rules: res.rules,
    detail: res.detail,
    ...(res.error !== undefined ? { error: res.error } : {}),
    ...(res.summary !== undefined ? { summary: res.summary } : {}),
    ...(res.inputError ? { inputError: true } : {}),
  };
}

function skipped(r: ScenarioResult, index: number, kind: Step['kind'], title: string, line: number, rules: string[]): ReportStep {
  return { index, kind, title, file: r.scenario.file, line, status: 'skipped', virtualMs: 0, wallMs: 0, rules, detail: [] };
}

export function countSteps(steps: readonly ReportStep[]): StepCounts {
  const n = (s: StepStatus): number => steps.filter((x) => x.status === s).length;
  return { total: steps.length, passed: n('passed'), failed: n('failed'), skipped: n('skipped') };
}

/** The report model of one scenario's result. */
export function scenarioReport(r: ScenarioResult): ScenarioReport {
  const written = r.scenario.steps;
  const steps: ReportStep[] = [];
  let w = 0;
  let atRest = false;
  for (const res of r.steps) {
    const next = written[w];
    if (next && res.index === next.index && res.kind === next.kind && res.line === next.line) {
      steps.push(fromResult(r, res, next.line));
      w++;
    } else if (w === written.length && !atRest && res.index === written.length + 1 && res.title === AT_REST_TITLE) {
      steps.push(fromResult(r, res, 1));
      atRest = true;
    } else steps.push(fromResult(r, res, next?.line ?? 1)); // a failure outside the written steps, where it happened
  }
  for (const s of written.slice(w)) steps.push(skipped(r, s.index, s.kind, stepTitle(s), s.line, s.rules ?? []));
  if (!atRest) steps.push(skipped(r, written.length + 1, 'expect', AT_REST_TITLE, 1, []));
  return {
    name: r.scenario.name,
    file: r.scenario.file,
    seed: r.seed,
    ok: r.ok,
    virtualMs: r.virtualMs,
    wallMs: r.wallMs,
    steps,
    counts: countSteps(steps),
    replay: `npx hcs-testbed run ${r.scenario.file} --seed ${r.seed}`,
  };
}

/** "12/12 steps passed" or "9/12 steps passed, 1 failed, 2 not reached" — the same words in every report. */
export function countsText(c: StepCounts): string {
  return [`${c.passed}/${c.total} steps passed`, ...(c.failed ? [`${c.failed} failed`] : []), ...(c.skipped ? [`${c.skipped} not reached`] : [])].join(', ');
}

/** Totals over several scenarios. */
export function totalCounts(reports: readonly ScenarioReport[]): StepCounts {
  return reports.reduce((t, r) => ({ total: t.total + r.counts.total, passed: t.passed + r.counts.passed, failed: t.failed + r.counts.failed, skipped: t.skipped + r.counts.skipped }), { total: 0, passed: 0, failed: 0, skipped: 0 });
}
