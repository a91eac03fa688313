/**
 * The conformance table (`hcs-testbed conformance`, issue 22): per SPEC rule,
 * the scenarios that exercise it and whether the provider met the contract
 * there. Built from results of runs with `RunOptions.conformance` (reference
 * checks skipped or run as their contract core, reference invariants set
 * aside; src/harness/scenario/contract.ts).
 *
 * A rule is attributed to a step by the step's `rules`, by the rules of the
 * checks it ran (CheckDef.rules) and by the rules of the invariants it broke.
 * A step failed by an invariant violation fails the violated rules; one failed
 * by its own checks or action fails the step's rules (the scenario's header
 * rules when it names none); rules of the steps after it are "not reached"; a scenario's header
 * rules pass when the whole scenario passed. A rule only reference checks
 * exercised is "skipped".
 */
import { CHECKS } from './checks.js';
import type { ScenarioResult, StepResult } from './runner.js';
import type { Step } from './types.js';

export type RuleStatus = 'pass' | 'fail' | 'not reached' | 'skipped';

export interface RuleFailure {
  scenario: string;
  step: number;
  title: string;
  /** The step's error (the failing checks' observations, the violated invariant). */
  evidence: string;
}

export interface ConformanceRow {
  rule: string;
  status: RuleStatus;
  scenarios: string[];
  failures: RuleFailure[];
  /** Reference checks skipped for this rule (check — why). */
  skipped: string[];
}

export interface ConformanceTable {
  rows: ConformanceRow[];
  /** Reference checks and invariant findings skipped, in all. */
  skippedChecks: number;
  skippedInvariants: number;
  ok: boolean;
}

interface Acc {
  scenarios: Set<string>;
  pass: boolean;
  reached: boolean;
  failures: RuleFailure[];
  skipped: string[];
}

/** Rules a step exercised as run: its own, and those of the checks it ran (a reference check without a contract core ran not). */
function stepRules(step: Step | undefined, res: StepResult): string[] {
  const out = new Set(res.rules);
  if (step && (step.kind === 'wait' || step.kind === 'expect')) {
    for (const c of step.checks) {
      const def = CHECKS[c.type];
      if (!def) continue;
      const t = def.tier(c.params);
      if (t.tier === 'reference' && !t.core) continue;
      for (const r of def.rules ?? []) out.add(r);
    }
  }
  return [...out];
}

export function conformanceTable(results: readonly ScenarioResult[]): ConformanceTable {
  const rules = new Map<string, Acc>();
  const acc = (rule: string): Acc => {
    let a = rules.get(rule);
    if (!a) rules.set(rule, (a = { scenarios: new Set(), pass: false, reached: false, failures: [], skipped: [] }));
    return a;
  };
  let skippedChecks = 0;
  let skippedInvariants = 0;
  for (const r of results) {
    const name = r.scenario.name;
    const byIndex = new Map(r.scenario.steps.map((s) => [s.index, s]));
    const failedAt = r.steps.find((s) => !s.ok);
    for (const res of r.steps) {
      const step = byIndex.get(res.index);
      const ruleIds = stepRules(step, res);
      skippedChecks += res.skipped?.length ?? 0;
      // Rules whose every check in this step was skipped (no contract core) are "skipped" here, not passed.
      const onlySkipped =
        (step?.kind === 'kubectl' && !!res.skipped?.length) ||
        ((step?.kind === 'wait' || step?.kind === 'expect') && res.skipped?.length === step.checks.length && res.skipped.every((s) => !s.core));
      for (const s of res.skipped ?? []) for (const id of res.rules) acc(id).skipped.push(`${name} step ${res.index}: ${s.check} — ${s.why}${s.core ? ` (ran ${s.core})` : ''}`);
      for (const id of ruleIds) acc(id).scenarios.add(name);
      if (res.ok) {
        if (!onlySkipped) for (const id of ruleIds) Object.assign(acc(id), { pass: true, reached: true });
        continue;
      }
      const violated = [...new Set(r.violations.filter((v) => res.error?.includes(`${v.rule}: ${v.message}`)).map((v) => v.rule))];
      // An invariant violation is blamed on its rules alone (the step's checks did not fail); a failed check on the step's rules.
      const blamed = violated.length ? violated : ruleIds.length ? ruleIds : r.scenario.rules;
      for (const id of blamed) {
        const a = acc(id);
        a.scenarios.add(name);
        a.reached = true;
        a.failures.push({ scenario: name, step: res.index, title: res.title, evidence: (res.error ?? 'failed').replace(/\s+/g, ' ').slice(0, 600) });
      }
    }
    // Steps never run, and the scenario's header rules.
    if (failedAt) {
      for (const s of r.scenario.steps) if (s.index > failedAt.index) for (const id of s.rules ?? []) acc(id).scenarios.add(name);
      for (const id of r.scenario.rules) acc(id).scenarios.add(name);
    } else for (const id of r.scenario.rules) Object.assign(acc(id), { pass: true, reached: true }).scenarios.add(name);
    skippedInvariants += r.skippedInvariants?.length ?? 0;
    for (const f of r.skippedInvariants ?? []) acc(f.rule).skipped.push(`${name} invariant ${f.key}: ${f.message} — ${f.why}`);
  }
  const rows: ConformanceRow[] = [...rules.entries()]
    .map(([rule, a]) => ({
      rule,
      status: (a.failures.length ? 'fail' : a.pass ? 'pass' : a.scenarios.size && !a.skipped.length ? 'not reached' : 'skipped') as RuleStatus,
      scenarios: [...a.scenarios].sort(),
      failures: a.failures,
      skipped: a.skipped,
    }))
    .sort((x, y) => ruleOrder(x.rule, y.rule));
  return { rows, skippedChecks, skippedInvariants, ok: results.every((r) => r.ok) };
}

function ruleOrder(a: string, b: string): number {
  const [pa, na] = a.split('-');
  const [pb, nb] = b.split('-');
  return (pa ?? '').localeCompare(pb ?? '') || Number(na) - Number(nb);
}

/** The table as text: rule | scenarios | result, then the failing step and its evidence under each failed rule. */
export function conformanceText(t: ConformanceTable, o: { verbose?: boolean } = {}): string {
  const w1 = Math.max(4, ...t.rows.map((r) => r.rule.length));
  const scen = (r: ConformanceRow): string => r.scenarios.join(', ') || '-';
  const w2 = Math.min(60, Math.max(9, ...t.rows.map((r) => scen(r).length)));
  const lines = [`${'RULE'.padEnd(w1)}  ${'SCENARIOS'.padEnd(w2)}  RESULT`];
  for (const r of t.rows) {
    lines.push(`${r.rule.padEnd(w1)}  ${scen(r).padEnd(w2)}  ${r.status.toUpperCase()}${r.status === 'skipped' ? ' (reference only)' : r.skipped.length ? ` (${r.skipped.length} reference check${r.skipped.length === 1 ? '' : 's'} skipped)` : ''}`);
    for (const f of r.failures) lines.push(`${''.padEnd(w1)}    ✗ ${f.scenario} step ${f.step} (${f.title}): ${f.evidence}`);
    if (o.verbose) for (const s of r.skipped) lines.push(`${''.padEnd(w1)}    ~ ${s}`);
  }
  const n = (s: RuleStatus): number => t.rows.filter((r) => r.status === s).length;
  lines.push(`conformance: ${n('pass')} rules pass, ${n('fail')} fail, ${n('not reached')} not reached, ${n('skipped')} only reference-checked; ${t.skippedChecks} reference checks and ${t.skippedInvariants} reference invariant findings skipped`);
  return lines.join('\n') + '\n';
}
