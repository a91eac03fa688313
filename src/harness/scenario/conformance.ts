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
 * rules when it names none); rules of the steps after it are "not reached".
 * A rule passes only where a contract check ran for it and passed (issue 37):
 * a check with rules of its own (CheckDef.rules) counts for those, one without
 * for its step's rules; a scenario's header rules pass with the whole scenario
 * only when the continuous invariants state them (INVARIANT_RULES). A rule
 * whose every check was a skipped reference check is "skipped" (reference only).
 */
import { CHECKS, describeCheck } from './checks.js';
import { INVARIANT_RULES } from './invariants.js';
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

/** Step kinds that only act on the system (nothing in them is a check): their rules are exercised, never passed, by them. */
const ACTION_ONLY = new Set(['write', 'advance', 'fault', 'crash', 'edit', 'server', 'cloud']);

/**
 * What a step contributes to each rule, as run in conformance mode:
 * - `evidence`: rules a contract check of the step ran for and passed with the step — a wait/expect check run
 *   (contract, or a reference check's contract core) counts for its own rules (CheckDef.rules) when it has any,
 *   else for the step's rules; a kubectl step whose expectations were not skipped, an apply, a read count for
 *   the step's rules;
 * - `exercised`: every rule named by the step or by a check in it (also the skipped ones).
 */
function stepAttribution(step: Step | undefined, res: StepResult): { evidence: Set<string>; exercised: Set<string> } {
  const evidence = new Set<string>();
  const exercised = new Set(res.rules);
  if (!step) return { evidence, exercised };
  if (step.kind === 'wait' || step.kind === 'expect') {
    const skippedNames = new Set((res.skipped ?? []).filter((s) => !s.core).map((s) => s.check));
    for (const c of step.checks) {
      const def = CHECKS[c.type];
      if (!def) continue;
      const own = def.rules ?? [];
      for (const r of own) exercised.add(r);
      const t = def.tier(c.params);
      const ran = t.tier === 'contract' || (!!t.core && !skippedNames.has(describeCheck(c.type, c.params)));
      if (!ran) continue;
      for (const r of own.length ? own : res.rules) evidence.add(r);
    }
  } else if (step.kind === 'kubectl') {
    if (!res.skipped?.length) for (const r of res.rules) evidence.add(r);
  } else if (!ACTION_ONLY.has(step.kind)) for (const r of res.rules) evidence.add(r);
  return { evidence, exercised };
}

/**
 * The table. A rule reads PASS only when at least one contract check ran for it and passed (issue 37): a step's
 * check (stepAttribution), or — for a rule the continuous invariants state (INVARIANT_RULES), named in the header of
 * a scenario that passed — those invariants, held at every instant. A rule some scenario names whose every
 * check was a skipped reference check reads SKIPPED (reference only), even when its scenario passed.
 */
export function conformanceTable(results: readonly ScenarioResult[]): ConformanceTable {
  const rules = new Map<string, Acc>();
  const acc = (rule: string): Acc => {
    let a = rules.get(rule);
    if (!a) rules.set(rule, (a = { scenarios: new Set(), pass: false, reached: false, failures: [], skipped: [] }));
    return a;
  };
  let skippedChecks = 0;
  let skippedInvariants = 0;
  const invariantRules = new Set<string>(INVARIANT_RULES);
  for (const r of results) {
    const name = r.scenario.name;
    const byIndex = new Map(r.scenario.steps.map((s) => [s.index, s]));
    const failedAt = r.steps.find((s) => !s.ok);
    for (const res of r.steps) {
      const step = byIndex.get(res.index);
      const { evidence, exercised } = stepAttribution(step, res);
      skippedChecks += res.skipped?.length ?? 0;
      for (const s of res.skipped ?? []) for (const id of res.rules) acc(id).skipped.push(`${name} step ${res.index}: ${s.check} — ${s.why}${s.core ? ` (ran ${s.core})` : ''}`);
      for (const id of exercised) acc(id).scenarios.add(name);
      if (res.ok) {
        for (const id of evidence) Object.assign(acc(id), { pass: true, reached: true });
        continue;
      }
      const violated = [...new Set(r.violations.filter((v) => res.error?.includes(`${v.rule}: ${v.message}`)).map((v) => v.rule))];
      // An invariant violation is blamed on its rules alone (the step's checks did not fail); a failed check on the step's rules.
      const ruleIds = [...exercised];
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
    } else {
      for (const id of r.scenario.rules) {
        const a = acc(id);
        a.scenarios.add(name);
        if (invariantRules.has(id)) Object.assign(a, { pass: true, reached: true });
      }
    }
    skippedInvariants += r.skippedInvariants?.length ?? 0;
    for (const f of r.skippedInvariants ?? []) acc(f.rule).skipped.push(`${name} invariant ${f.key}: ${f.message} — ${f.why}`);
  }
  const rows: ConformanceRow[] = [...rules.entries()]
    .map(([rule, a]) => ({
      rule,
      status: (a.failures.length ? 'fail' : a.pass ? 'pass' : a.skipped.length ? 'skipped' : 'not reached') as RuleStatus,
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
