import type { ScenarioResult, StepResult } from '../scenario/runner.js';
import type { Scenario, Step } from '../scenario/types.js';
import { countsText, plannedSteps, scenarioReport, totalCounts } from './model.js';

/** hh:mm:ss of virtual time since the scenario started. */
export function vtime(ms: number): string {
  const s = Math.floor(ms / 1000);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${p(Math.floor(s / 3600))}:${p(Math.floor((s % 3600) / 60))}:${p(s % 60)}`;
}

export interface ConsoleOptions {
  write: (text: string) => void;
  /** Show check verdicts and command output under each step. */
  verbose: boolean;
  color: boolean;
}

/** Failed scenarios the closing summary lists again, one line each. */
const MAX_FAILURES_LISTED = 20;

/** A message's first line, cut to 400 characters. */
function firstLine(s: string): string {
  const l = s.split('\n')[0] ?? '';
  return l.length > 400 ? `${l.slice(0, 400)}…` : l;
}

export class ConsoleReporter {
  constructor(private readonly o: ConsoleOptions) {}

  private c(code: string, s: string): string {
    return this.o.color ? `\x1b[${code}m${s}\x1b[0m` : s;
  }

  /** The step count is the one every report uses (src/harness/report/model.ts): the written steps and the invariants at rest. */
  scenarioStart(s: Scenario, seed: number): void {
    this.o.write(`\n${this.c('1', `▶ ${s.name}`)}  ${this.c('2', `${s.file} · seed ${seed} · ${plannedSteps(s)} steps (incl. invariants at rest)`)}\n`);
  }

  stepStart(_step: Step): void {}

  /** Live progress during a long wait. */
  progress(virtualMs: number, summary: string): void {
    this.o.write(`  ${this.c('2', `[${vtime(virtualMs)}] … ${summary}`)}\n`);
  }

  stepEnd(r: StepResult): void {
    const mark = r.ok ? this.c('32', '✓') : this.c('31', '✗');
    const took = r.endMs - r.startMs;
    const dur = took >= 1000 ? this.c('2', ` (${vtime(took)} virtual)`) : '';
    const rules = r.rules.length ? this.c('36', ` [${r.rules.join(' ')}]`) : '';
    this.o.write(`  ${this.c('2', `[${vtime(r.endMs)}]`)} ${mark} ${String(r.index).padStart(2)} ${r.title}${rules}${dur}\n`);
    if (r.summary) this.o.write(`               ${this.c('36', r.summary)}\n`);
    // Whole: -v shows a step's output uncut (a `describe` is long), and a failure's explanation is never cut off.
    const lines = r.ok ? (this.o.verbose ? r.detail : []) : r.detail;
    for (const l of lines) this.o.write(`               ${this.c('2', l)}\n`);
    if (r.error) this.o.write(`               ${this.c('31', r.error)}\n`);
  }

  /** The verdict with the shared step counts; steps not reached are listed with their full titles. */
  scenarioEnd(r: ScenarioResult): void {
    const m = scenarioReport(r);
    for (const s of m.steps.filter((x) => x.status === 'skipped')) this.o.write(`  ${this.c('2', `[--:--:--] – ${String(s.index).padStart(2)} ${s.title} (not reached)`)}\n`);
    const verdict = r.ok ? this.c('32', 'PASS') : this.c('31', 'FAIL');
    this.o.write(`  ${verdict} ${r.scenario.name}: ${countsText(m.counts)} (incl. invariants at rest), ${vtime(r.virtualMs)} virtual in ${(r.wallMs / 1000).toFixed(2)}s wall, ${r.events.length} events\n`);
    if (!r.ok) this.o.write(`  ${this.c('33', `replay: ${m.replay}`)}\n`);
  }

  summary(results: ScenarioResult[]): void {
    const passed = results.filter((r) => r.ok).length;
    const failed = results.length - passed;
    this.o.write(`\n${passed} passed, ${failed} failed · ${countsText(totalCounts(results.map(scenarioReport)))}\n`);
    // The failures again, one line each, where a long run's last screen (or a CI log's tail) shows them.
    const bad = results.filter((r) => !r.ok);
    for (const r of bad.slice(0, MAX_FAILURES_LISTED)) {
      const step = r.steps.find((x) => !x.ok);
      const why = step ? `step ${step.index} (${step.title}): ${firstLine(step.error ?? 'failed')}` : 'failed';
      this.o.write(`${this.c('31', 'FAIL')} ${r.scenario.name} @ seed ${r.seed}: ${why}\n`);
    }
    if (bad.length > MAX_FAILURES_LISTED) this.o.write(`… and ${bad.length - MAX_FAILURES_LISTED} more failed scenarios (above)\n`);
  }
}
