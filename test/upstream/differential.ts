/**
 * Generated rollouts (src/harness/explore/rollouts.ts) on the model and on another
 * side (the upstream managers in test/upstream/rollouts.test.ts and
 * bench/upstream-generated.ts; a mutant of the model in
 * test/upstream/sequences.test.ts), compared by verdict and by the shape of
 * the run (test/upstream/sequences.ts). A difference is shrunk with the
 * explorer's ddmin (src/harness/explore/shrink.ts) over the rollout's operations and
 * written as a scenario.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { dump } from 'js-yaml';
import { declaredPhases, describeRollout, flatten, rolloutScenario, subset, type DeclaredPhase, type GeneratedRollout } from '../../src/harness/explore/rollouts.js';
import { ddmin } from '../../src/harness/explore/shrink.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult, type TestbedFactory } from '../../src/harness/scenario/runner.js';
import { compareShapes, entryBounds, recordingStart, runShape, type RunShape } from './sequences.js';

/**
 * test/upstream/scenarios/paused-scale.yaml's values in force up to each of its six waits (sequences.ts
 * entryBounds): maxSurge 1 / maxUnavailable 0 throughout; 3 replicas, scaled to 5 while paused (third wait),
 * back to 3 while paused again (fifth).
 */
export const PAUSED_SCALE_DECLARED: readonly DeclaredPhase[] = [[3], [3], [3, 5], [5], [5, 3], [3]].map((replicas) => ({ replicas, maxSurge: [1], maxUnavailable: [0] }));

export interface Verdict {
  ok: boolean;
  steps: string[];
}

export function verdictOf(r: ScenarioResult): Verdict {
  return { ok: r.ok, steps: r.steps.map((s) => `${s.index} ${s.title}: ${s.ok ? 'pass' : 'FAIL'}`) };
}

export interface SideRun {
  result: ScenarioResult;
  shape: RunShape;
  /** The virtual time the runner counted step times from. */
  t0: number;
}

export interface Comparison {
  rollout: GeneratedRollout;
  model: SideRun;
  other: SideRun;
  /** Empty: the same verdict and shape. */
  differences: string[];
  /** What was seen but not compared (the groups, when `groups` is false). */
  notes: string[];
}

/** The scenario file of a rollout (YAML), in `dir`. The library's manifests are found through `library:` paths. */
export function writeRolloutScenario(g: GeneratedRollout, dir: string, name?: string, expectViolations: readonly string[] = []): string {
  mkdirSync(dir, { recursive: true });
  const s = rolloutScenario(g, name, expectViolations);
  const file = resolve(join(dir, `${String(s.name)}.yaml`));
  writeFileSync(file, `# ${describeRollout(g)}\n${dump(s, { lineWidth: 200, noRefs: true })}`);
  return file;
}

async function runSide(file: string, factory: TestbedFactory): Promise<SideRun> {
  const rec = recordingStart(factory);
  const result = await runScenario(loadScenario(file), rec.factory);
  const t0 = rec.starts[0] ?? 0;
  return { result, shape: runShape(result, t0, { randomDeletion: true }), t0 };
}

function failures(r: ScenarioResult): string {
  return r.steps
    .filter((s) => !s.ok)
    .map((s) => `step ${s.index} (${s.title}): ${s.error ?? ''}`)
    .join('; ');
}

/** Run one rollout on the model and on `other`; compare verdicts and shapes. */
export async function compareRollout(g: GeneratedRollout, dir: string, model: TestbedFactory, other: TestbedFactory, name?: string, groups = true): Promise<Comparison> {
  const notes: string[] = [];
  let file = writeRolloutScenario(g, dir, name);
  let m = await runSide(file, model);
  // The invariants the model's run breaks (MD-3 when a surge Machine takes a spare entry) are expected of both sides:
  // the scenario is rewritten with them, and the other side then fails unless it breaks them too.
  // A run stops at its first unexpected violation, so this repeats until the model's run breaks nothing new.
  let broken: string[] = [];
  for (let i = 0; i < 4; i++) {
    const now = [...new Set([...broken, ...m.result.violations.map((v) => v.rule)])].sort();
    if (now.length === broken.length) break;
    broken = now;
    file = writeRolloutScenario(g, dir, name, broken);
    m = await runSide(file, model);
  }
  const o = await runSide(file, other);
  const differences: string[] = [];
  const vm = verdictOf(m.result);
  const vo = verdictOf(o.result);
  if (JSON.stringify(vm) !== JSON.stringify(vo)) differences.push(`verdict: model ${vm.ok ? 'pass' : `FAIL (${failures(m.result)})`}, other ${vo.ok ? 'pass' : `FAIL (${failures(o.result)})`}`);
  differences.push(...compareShapes(m.shape, o.shape, { randomDeletion: true, groups }));
  // The causal entry bounds (sequences.ts entryBounds): they hold under any pacing, so they are asserted on both sides.
  const declared = declaredPhases(g);
  differences.push(...entryBounds(m.result, m.t0, declared).map((x) => `model: ${x}`), ...entryBounds(o.result, o.t0, declared).map((x) => `other: ${x}`));
  if (!groups && JSON.stringify(m.shape.groups) !== JSON.stringify(o.shape.groups)) notes.push(`groups differ (reported, not compared): model ${m.shape.groups.join(' ')}, other ${o.shape.groups.join(' ')}`);
  return { rollout: g, model: m, other: o, differences, notes };
}

/**
 * ddmin over the rollout's operations: the smallest subset (1-minimal) that
 * still differs; written as `<dir>/generated-rollout-<seed>-shrunk.yaml`.
 * `maxTests` bounds the runs (each a model and an upstream run).
 */
export async function shrinkDifference(c: Comparison, dir: string, model: TestbedFactory, other: TestbedFactory, maxTests = 12, groups = true): Promise<{ file: string; rollout: GeneratedRollout; tests: number }> {
  const { ops } = flatten(c.rollout);
  const stats = { tests: 0 };
  const keep = await ddmin(
    ops.map((_, i) => i),
    async (candidates) => {
      const out: boolean[] = [];
      for (const cand of candidates) {
        if (stats.tests > maxTests) {
          out.push(false);
          continue;
        }
        const g = subset(c.rollout, cand);
        const r = await compareRollout(g, join(dir, 'shrink'), model, other, `generated-rollout-${c.rollout.seed}-shrink-${stats.tests}`, groups);
        out.push(r.differences.length > 0);
      }
      return out;
    },
    stats,
  );
  const rollout = subset(c.rollout, keep);
  const file = writeRolloutScenario(rollout, dir, `generated-rollout-${c.rollout.seed}-shrunk`);
  return { file, rollout, tests: stats.tests };
}
