/**
 * The comparison's relaxations (test/upstream/sequences.ts; docs/capi.md
 * "Compared with the upstream managers"), each with the difference it
 * forgives and a negative test: a real rule difference is still reported.
 * Model only (no binaries): runs in `npm test`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MachineDeployment } from '../../src/product/api/capi.js';
import type { LogEvent } from '../../src/core/events.js';
import { generateRollout, type GeneratedRollout } from '../../src/harness/explore/rollouts.js';
import type { ScenarioResult, StepResult, TestbedFactory } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';
import { compareRollout } from './differential.js';
import { compareShapes, entryBounds, groupOps, rolloutSequences, runShape } from './sequences.js';

const S = 1000;
/** A run with these operations ("+h1@10" = bound hostname h1 at 10 s; "-h1@70") and waits ending at the given seconds. */
function run(ops: string[], waitsAt: number[]): ScenarioResult {
  const events: LogEvent[] = ops.map((o, i) => {
    const m = /^([+-])(\w+)@(\d+)(?:#(\w+))?$/.exec(o)!;
    const machine = m[4] ?? `${m[2]}-${i}`;
    return m[1] === '+'
      ? { seq: i + 1, t: Number(m[3]) * S, source: 'provider', type: 'hcsmachine.entry-bound', message: '', data: { machine, hostname: m[2] } }
      : { seq: i + 1, t: Number(m[3]) * S, source: 'provider', type: 'hcsmachine.entry-released', message: '', data: { machine, hostnames: [m[2]] } };
  });
  const steps = waitsAt.map((t, i) => ({ index: i + 1, kind: 'wait', title: `wait ${i + 1}`, line: 0, ok: true, startMs: 0, endMs: t * S, detail: [], rules: [] }) as StepResult);
  return { events, steps, ok: true } as unknown as ScenarioResult;
}

describe('relaxation 1: each hostname over the whole run, not per rollout', () => {
  // Upstream re-checks a failed MachineSet preflight 15 s of wall time later (300 s virtual at ×20), so a
  // replacement's "+" can land after the rollout's wait on one side and before it on the other.
  const model = run(['+h1@0#a', '+h2@0#b', '-h1@100#a', '+h1@110#c'], [50, 200, 400]);
  const upstream = run(['+h1@0#a', '+h2@0#b', '-h1@100#a', '+h1@300#c'], [50, 200, 400]);
  it('a creation that falls into the next rollout compares equal (hostnames and counts; the groups with a window that covers the re-check)', () => {
    expect(rolloutSequences(upstream, 0)).not.toEqual(rolloutSequences(model, 0));
    const [m, u] = [runShape(model, 0), runShape(upstream, 0)];
    expect([m.hostnames, m.counts]).toEqual([u.hostnames, u.counts]);
    // With the default 60 s window the late creation is a group of its own: reported (a scenario with a
    // control plane, where MachineSet preflight checks run, needs windowMs above 15 s × the speed factor).
    expect(compareShapes(m, u)).toEqual([`groups of concurrent operations: model ++ +-, upstream ++ - +`]);
    expect(compareShapes(runShape(model, 0, { windowMs: 400 * S }), runShape(upstream, 0, { windowMs: 400 * S }))).toEqual([]);
  });
  it('negative: a hostname that got another Machine sequence is reported', () => {
    const other = run(['+h1@0#a', '+h2@0#b', '-h2@100#b', '+h2@110#c'], [50, 200, 400]);
    const bound3 = run(['+h1@0#a', '+h2@0#b', '-h1@100#a', '+h3@110#c'], [50, 200, 400]);
    expect(compareShapes(runShape(model, 0), runShape(bound3, 0))).not.toEqual([]);
    // Equal by counts: h1 or h2 replaced is the Random delete policy's pick, so only the strict comparison sees it.
    expect(compareShapes(runShape(model, 0), runShape(other, 0), { randomDeletion: true })).toEqual([]);
    expect(compareShapes(runShape(model, 0), runShape(run(['+h1@0#a', '+h2@0#b', '-h1@100#a', '+h1@110#c', '-h1@200#c', '+h1@210#d'], [50, 200, 400]), 0), { randomDeletion: true })).not.toEqual([]);
  });
});

describe('relaxation 2: concurrent operations compared as sets', () => {
  it('a deletion and a creation issued together compare equal in either order', () => {
    expect(groupOps([{ t: 0, kind: '-' }, { t: 2 * S, kind: '+' }], 60 * S)).toEqual(groupOps([{ t: 0, kind: '+' }, { t: 5 * S, kind: '-' }], 60 * S));
  });
  it('negative: maxSurge (a creation minutes before the deletion) and maxUnavailable (the deletion first) differ', () => {
    const surge = run(['+h4@0', '-h1@90', '+h1@95', '-h2@190', '+h2@195', '-h3@290'], [400]);
    const unavailable = run(['-h1@0', '+h1@5', '-h2@90', '+h2@95', '-h3@190', '+h3@195'], [400]);
    const d = compareShapes(runShape(surge, 0, { randomDeletion: true }), runShape(unavailable, 0, { randomDeletion: true }), { randomDeletion: true });
    expect(d.join('\n')).toContain('groups of concurrent operations');
  });
});

/** A mutant of the model: its MachineDeployment controller treats every rolling update as maxSurge `surge` / maxUnavailable `unavailable` (an MD-1 rule difference). */
function strategyMutant(surge: number, unavailable: number): TestbedFactory {
  const base = embeddedTestbedFactory();
  return async (seed) => {
    const tb = await base(seed);
    tb.world.mgmt.watch<MachineDeployment>('MachineDeployment', (e) => {
      const ru = e.object.spec.strategy?.rollingUpdate;
      if (e.type === 'DELETED' || (ru?.maxSurge === surge && ru.maxUnavailable === unavailable)) return;
      void tb.world.mgmt.patch({ kind: 'MachineDeployment', namespace: e.object.metadata.namespace, name: e.object.metadata.name }, 'merge', { spec: { strategy: { rollingUpdate: { maxSurge: surge, maxUnavailable: unavailable } } } }).catch(() => undefined);
    });
    return tb;
  };
}
/** The surge mutant: every rolling update as maxSurge 1 / maxUnavailable 0. */
const surgeMutant = (): TestbedFactory => strategyMutant(1, 0);

describe('relaxation 3: Random deletion compared by counts, on real model runs of generated rollouts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hcs-sequences-'));
  /** A rollout with a scale-in and a template change (which Machines go is Random's pick). */
  const g: GeneratedRollout = { seed: 31, initial: { replicas: 3, maxSurge: 0, maxUnavailable: 1 }, phases: [[{ op: 'scale', replicas: 1 }], [{ op: 'scale', replicas: 4 }], [{ op: 'scale', replicas: 2 }, { op: 'template' }]] };
  /** The same model with other random names (so Random picks other Machines): what upstream is to the model. */
  const otherNames: TestbedFactory = (seed) => embeddedTestbedFactory()(seed + 7);

  it('the model against itself with other random names: equal', async () => {
    const c = await compareRollout(g, dir, embeddedTestbedFactory(), otherNames);
    expect(c.model.result.ok, c.differences.join('\n')).toBe(true);
    expect(c.differences).toEqual([]);
  }, 60_000);

  it('negative: a mutant that rolls with maxSurge 1 whatever the spec says is reported', async () => {
    const c = await compareRollout(g, dir, embeddedTestbedFactory(), surgeMutant());
    expect(c.differences.length, 'the mutant must differ').toBeGreaterThan(0);
  }, 60_000);

  it('negative on generated rollouts: the surge mutant differs on a seeded rollout with a template change', async () => {
    const seed = [2, 7, 9].find((s) => generateRollout(s).initial.maxSurge === 0 || generateRollout(s).phases.flat().some((o) => o.op === 'strategy'))!;
    const c = await compareRollout(generateRollout(seed), dir, embeddedTestbedFactory(), surgeMutant());
    expect(c.differences.length, `seed ${seed}`).toBeGreaterThan(0);
  }, 60_000);
});

describe('the causal entry bounds (asserted on upstream instead of the groups)', () => {
  /** replicas 3, maxSurge 1 / maxUnavailable 1 declared for both waits. */
  const declared = [{ replicas: [3], maxSurge: [1], maxUnavailable: [1] }, { replicas: [3], maxSurge: [1], maxUnavailable: [1] }];
  const start = ['+h1@0', '+h2@0', '+h3@0'];
  it('hold in either order of a creation and a deletion issued together (what pacing changes on upstream)', () => {
    const surgeFirst = run([...start, '+h4@100', '-h1@110', '+h1@200', '-h2@210', '+h2@300', '-h3@310'], [50, 400]);
    const deleteFirst = run([...start, '-h1@100', '+h4@110', '-h2@200', '+h1@210', '-h3@300', '+h2@310'], [50, 400]);
    expect(entryBounds(surgeFirst, 0, declared)).toEqual([]);
    expect(entryBounds(deleteFirst, 0, declared)).toEqual([]);
    // The groups tell them apart only by time: with a window below the 10 s between them they differ.
    expect(compareShapes(runShape(surgeFirst, 0, { windowMs: 5 * S }), runShape(deleteFirst, 0, { windowMs: 5 * S }), { randomDeletion: true })).not.toEqual([]);
  });
  it('negative: two surge Machines at once (above replicas + maxSurge) and two deletions at once (below replicas - maxUnavailable) are reported, naming the phase and MD-1', () => {
    const twoSurge = run([...start, '+h4@100', '+h5@101', '-h1@110', '-h2@111'], [50, 400]);
    const twoDown = run([...start, '-h1@100', '-h2@101', '+h1@110', '+h2@111'], [50, 400]);
    expect(entryBounds(twoSurge, 0, declared)).toEqual(['entry bounds, phase 2 (wait 2): 5 pool entries held after +h5 at 101 s, above 4 (replicas 3 + maxSurge 1 declared; MD-1)']);
    expect(entryBounds(twoDown, 0, declared)).toEqual(['entry bounds, phase 2 (wait 2): 1 pool entries held after -h2 at 101 s, below 2 (replicas 3 - maxUnavailable 1 declared; MD-1)']);
  });
  it('widen for what the phase declares: a scale-in phase may fall to the new replicas - maxUnavailable, a scale-out phase may start below', () => {
    const scaleIn = run([...start, '-h1@100', '-h2@101'], [50, 400]);
    expect(entryBounds(scaleIn, 0, [declared[0]!, { replicas: [3, 1], maxSurge: [1], maxUnavailable: [0] }])).toEqual([]);
    expect(entryBounds(scaleIn, 0, [declared[0]!, { replicas: [3], maxSurge: [1], maxUnavailable: [0] }])).not.toEqual([]);
  });

  const dir = mkdtempSync(join(tmpdir(), 'hcs-bounds-'));
  it('on generated rollouts: the model with other names stays within them; the surge mutant breaks them where nothing else differs', async () => {
    // Seed 2612: maxSurge 0 / maxUnavailable 1, scale to 3 + template, pause + scale to 4, resume. With the groups
    // off (as on upstream), the surge mutant has the model's verdict and counts: only the bounds see it.
    const g = generateRollout(2612);
    const self = await compareRollout(g, dir, embeddedTestbedFactory(), (seed) => embeddedTestbedFactory()(seed + 7), undefined, false);
    expect(self.differences).toEqual([]);
    const c = await compareRollout(g, dir, embeddedTestbedFactory(), surgeMutant(), undefined, false);
    expect(c.differences.length, 'the mutant must differ').toBeGreaterThan(0);
    expect(c.differences.filter((d) => !d.startsWith('other: entry bounds')), 'only the bounds see it').toEqual([]);
    expect(c.differences[0]).toMatch(/above 3 \(replicas 3 \+ maxSurge 0 declared; MD-1\)/);
  }, 60_000);
  it('negative: a mutant that rolls with maxSurge 0 / maxUnavailable 1 where 1 / 0 is declared falls below the lower bound', async () => {
    // Seed 2614: its last rollout (the version change, resumed) is declared maxSurge 1 / maxUnavailable 0.
    const c = await compareRollout(generateRollout(2614), dir, embeddedTestbedFactory(), strategyMutant(0, 1), undefined, false);
    expect(c.differences.filter((d) => d.startsWith('other: entry bounds')).join('\n')).toMatch(/below 2 \(replicas 2 - maxUnavailable 0 declared; MD-1\)/);
  }, 60_000);
});
