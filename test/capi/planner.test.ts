/**
 * Table tests for the pure rollout decisions (src/world/capi/rollout-planner.ts),
 * which follow kubernetes-sigs/cluster-api v1.10.10 (the version tools/capi
 * builds): internal/controllers/machinedeployment/machinedeployment_rolling_test.go
 * (TestReconcileNewMachineSet, TestReconcileOldMachineSets) and
 * machinedeployment_rollout_ondelete.go. Where v1.10 and the v1.12 planner
 * differ, the case says so.
 *
 * The regular-rollout sequences are the "Result of rollout planner" states
 * of v1.12's golden logs (machinedeployment_rollout_rollingupdate_test.go
 * Test_RollingUpdateSequences, testdata/rollingupdate/regular rollout,
 * ….test.log.golden), one line per MachineDeployment reconcile: with every
 * Machine available at once, v1.10's algorithm gives exactly the same
 * sequences (v1.12's rewrite kept them), so they stay as a cross-check.
 */
import { describe, expect, it } from 'vitest';
import {
  mdMaxSurge,
  mdMaxUnavailable,
  newPlan,
  planOnDelete,
  InvalidScaleError,
  byDecreasingReplicas,
  planRollingUpdate,
  reconcileNewMachineSet,
  reconcileOldMachineSetsRollingUpdate,
  resolveFenceposts,
  type RolloutDeployment,
  type RolloutMachineSet,
} from '../../src/world/capi/rollout-planner.js';
import { initialScope, runSequence, type SeqMS, type SeqScope } from './sequence.js';

const md = (replicas: number, maxSurge: number | string = 1, maxUnavailable: number | string = 0): RolloutDeployment => ({ replicas, strategy: 'RollingUpdate', maxSurge, maxUnavailable });
let created = 0;
/** createMS(name, spec, status = spec, available = status) of the upstream tests. */
const ms = (name: string, spec: number, status = spec, available = status): RolloutMachineSet => ({ name, created: ++created, specReplicas: spec, statusReplicas: status, availableReplicas: available });

describe('fenceposts (mdutil.ResolveFenceposts, MaxSurge, MaxUnavailable)', () => {
  it('surge rounds up, unavailable rounds down, both zero → unavailable 1, unavailable capped at replicas', () => {
    expect(resolveFenceposts('25%', '25%', 10)).toEqual({ surge: 3, unavailable: 2 });
    expect(resolveFenceposts('10%', '10%', 3)).toEqual({ surge: 1, unavailable: 0 });
    expect(resolveFenceposts(0, 0, 3)).toEqual({ surge: 0, unavailable: 1 });
    expect(resolveFenceposts('0%', '20%', 4)).toEqual({ surge: 0, unavailable: 1 });
    expect(mdMaxUnavailable(md(2, 0, 5))).toBe(2);
    expect(mdMaxUnavailable(md(0, 0, 5))).toBe(0);
    expect(mdMaxSurge({ replicas: 3, strategy: 'OnDelete' })).toBe(0);
    expect(mdMaxUnavailable({ replicas: 3, strategy: 'OnDelete' })).toBe(0);
  });
});

describe('reconcileNewMachineSet (TestReconcileNewMachineSet)', () => {
  const cases: { name: string; md: RolloutDeployment; newMS: RolloutMachineSet; old: RolloutMachineSet[]; want: number }[] = [
    { name: 'scale up 0 → 2', md: md(2, 2, 0), newMS: ms('new', 0), old: [], want: 2 },
    { name: 'scale down 2 → 0', md: md(0, 2, 0), newMS: ms('new', 2), old: [], want: 0 },
    { name: 'scale up does not go above maxSurge (3+2)', md: md(3, 2, 0), newMS: ms('new', 1), old: [ms('3replicas', 3)], want: 2 },
    { name: 'scale up accounts for deleting Machines to honour maxSurge', md: md(1, 0, 0), newMS: ms('new', 0), old: [ms('machine-not-yet-deleted', 0, 1)], want: 0 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const p = newPlan(c.md, c.newMS, c.old);
      reconcileNewMachineSet(p);
      expect(p.scaleIntents[c.newMS.name] ?? c.newMS.specReplicas).toBe(c.want);
    });
  }
});

describe('reconcileOldMachineSets, rolling (v1.10.10 machinedeployment_rolling.go, TestReconcileOldMachineSets)', () => {
  const cases: { name: string; md: RolloutDeployment; newMS: RolloutMachineSet; old: RolloutMachineSet[]; want: Record<string, number> }[] = [
    // The two cases of upstream's v1.10.10 TestReconcileOldMachineSets.
    { name: 'scale down old MachineSets when all new replicas are available', md: md(2, 3, 1), newMS: ms('bar', 0, 0, 2), old: [ms('2replicas', 2), ms('1replicas', 1)], want: { '2replicas': 0, '1replicas': 0 } },
    { name: 'does not scale down old MachineSets when above maxUnavailable', md: md(10, 3, 2), newMS: ms('bar', 5, 5, 0), old: [ms('8replicas', 8, 10, 8)], want: {} },
    // maxScaledDown = Σ spec − minAvailable − (new spec − new available): the new MachineSet's
    // unavailable replicas are subtracted (the rule cluster-api PR #13020 restored in the v1.12 planner).
    { name: "the new MachineSet's unavailable replicas hold back the old ones' scale down", md: md(5, 0, 2), newMS: ms('ms2', 2, 2, 0), old: [ms('ms1', 3)], want: {} },
    { name: 'unavailability on the new MachineSet blocks', md: md(3, 1, 0), newMS: ms('ms2', 1, 1, 0), old: [ms('ms1', 3)], want: {} },
    { name: 'no op if there are no replicas on old MachineSets', md: md(10, 1, 0), newMS: ms('ms2', 10), old: [ms('ms1', 0)], want: {} },
    { name: 'no scale down if available == minAvailable', md: md(3, 1, 0), newMS: ms('ms2', 1), old: [ms('ms1', 2)], want: {} },
    { name: 'a scale down of an earlier reconcile still in progress leaves no budget', md: md(3, 1, 0), newMS: ms('ms2', 1), old: [ms('ms1', 2, 3, 3)], want: {} },
    { name: 'all available: scale down by one', md: md(3, 1, 0), newMS: ms('ms2', 1), old: [ms('ms1', 3)], want: { ms1: 2 } },
    // cleanupUnhealthyReplicas first (oldest first), then scaleDownOldMachineSetsForRollingUpdate on Σ available − minAvailable.
    { name: 'unavailable replicas of old MachineSets go first, then available ones', md: md(3, 1, 0), newMS: ms('ms4', 1), old: [ms('ms1', 3), ms('ms2', 1, 1, 0), ms('ms3', 2, 2, 0)], want: { ms2: 0, ms3: 0, ms1: 2 } },
    // Here v1.10 and v1.12 differ: v1.12 keeps an unavailable old Machine until its deadlock breaker; v1.10 removes it at once.
    { name: 'an unavailable old Machine is removed within the budget (v1.12 would wait)', md: md(3, 1, 0), newMS: ms('ms2', 1), old: [ms('ms1', 3, 3, 2)], want: { ms1: 2 } },
    { name: 'removes unavailable replicas up to the budget, then stops at minAvailable', md: md(3, 1, 0), newMS: ms('ms4', 1), old: [ms('ms1', 1), ms('ms2', 1, 1, 0), ms('ms3', 2, 2, 1)], want: { ms2: 0, ms3: 1 } },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const p = newPlan(c.md, c.newMS, c.old);
      reconcileOldMachineSetsRollingUpdate(p);
      expect(p.scaleIntents).toEqual(c.want);
    });
  }

  it('sees the spec.replicas reconcileNewMachineSet set in the same reconcile (scaleMachineSet updates the object in memory)', () => {
    // new 0 → 1 first; then Σ spec = 4, minAvailable 3, new unavailable 1: no old scale down yet.
    expect(planRollingUpdate(md(3, 1, 0), ms('ms2', 0, 0, 0), [ms('ms1', 3)]).scaleIntents).toEqual({ ms2: 1 });
    // Without the new MachineSet's scale up (already 1, available) the old one goes down by one.
    expect(planRollingUpdate(md(3, 1, 0), ms('ms2', 1), [ms('ms1', 3)]).scaleIntents).toEqual({ ms1: 2 });
  });

  it('refuses a "scale down" that would raise spec.replicas (more available Machines than replicas), as upstream errors', () => {
    // ms1 spec 3 with 4 available Machines (a scale down still in progress): cleanupUnhealthyReplicas computes 3 → 4.
    expect(() => reconcileOldMachineSetsRollingUpdate(newPlan(md(3, 1, 0), ms('ms2', 2), [ms('ms1', 3, 4, 4)]))).toThrow(InvalidScaleError);
    expect(() => reconcileOldMachineSetsRollingUpdate(newPlan(md(3, 1, 0), ms('ms2', 2), [ms('ms1', 3, 4, 4)]))).toThrow(/invalid request to scale down ms1: 3 -> 4/);
  });

  it('removes an unavailable old Machine within the budget, and with no budget nothing moves (no deadlock breaker, added in v1.12)', () => {
    // maxUnavailable 0, new MachineSet full and available: Σ spec 6 − 5 − 0 = 1, cleanup removes the unavailable one.
    expect(planRollingUpdate(md(5, 1, 0), ms('ms2', 5), [ms('ms1', 1, 1, 0)]).scaleIntents).toEqual({ ms1: 0 });
    // The new MachineSet has an unavailable Machine: Σ spec 6 − 5 − 1 = 0, nothing moves (v1.12's breaker would not fire either).
    expect(planRollingUpdate(md(5, 1, 0), ms('ms2', 5, 5, 4), [ms('ms1', 1, 1, 0)]).scaleIntents).toEqual({});
  });
});

describe('OnDelete (v1.10.10 machinedeployment_rollout_ondelete.go)', () => {
  const od = (replicas: number): RolloutDeployment => ({ replicas, strategy: 'OnDelete' });
  it('does nothing until a user deletes an old Machine', () => {
    expect(planOnDelete(od(3), ms('ms2', 0, 0, 0), [ms('ms1', 3)]).scaleIntents).toEqual({});
  });
  it('aligns an old MachineSet to its Machines not being deleted, then the new one takes the freed replica', () => {
    // ms1 has 3 Machines, one of them being deleted: spec 3 → 2 at once (upstream lists the Machines).
    expect(planOnDelete(od(3), ms('ms2', 0, 0, 0), [{ ...ms('ms1', 3, 3, 2), liveMachines: 2 }]).scaleIntents).toEqual({ ms1: 2 });
    // next reconcile: the Machine is gone, ms1 is 2/2, total 2 < 3 → new MachineSet +1.
    expect(planOnDelete(od(3), ms('ms2', 0, 0, 0), [ms('ms1', 2)]).scaleIntents).toEqual({ ms2: 1 });
  });
  it("takes a scale down of the deployment from the old MachineSets in decreasing-replicas order (FindOldMachineSets keeps FindNewMachineSet's sort)", () => {
    const older = ms('ms1', 1);
    const newer = ms('ms2', 3);
    // MachineSetsByDecreasingReplicas: ms2 (3) before ms1 (1) although ms1 is older.
    const old = [older, newer].sort(byDecreasingReplicas);
    expect(old.map((x) => x.name)).toEqual(['ms2', 'ms1']);
    // surplus = 3 + 1 + 1 − 3 = 2, all from ms2.
    expect(planOnDelete(od(3), ms('ms3', 1), old).scaleIntents).toEqual({ ms2: 1 });
    // Equal replicas: oldest first.
    expect(planOnDelete(od(2), ms('ms5', 1), [ms('ms3', 2), ms('ms4', 2)].sort(byDecreasingReplicas)).scaleIntents).toEqual({ ms3: 0, ms4: 1 });
  });
});

function scope(version: string, replicas: number, maxSurge: number, maxUnavailable: number, sets: SeqMS[], machineUID: number): SeqScope {
  return {
    md: { version, replicas, maxSurge, maxUnavailable, statusReplicas: sets.reduce((n, s) => n + s.machines.length, 0) },
    machineSets: sets.map((s) => ({ ...s, status: s.machines.length, available: s.machines.length })),
    machineUID,
  };
}
const names = (a: number, b: number): string[] => Array.from({ length: b - a + 1 }, (_, i) => `m${a + i}`);

/**
 * Sequences: expected "Result of rollout planner" per iteration, transcribed from upstream's golden logs.
 * `breaches` are the constraint breaches upstream tolerates in the same test (maxUnavailableBreachToleration /
 * maxSurgeBreachToleration): a scale-up of the MD counts its not-yet-created replicas as unavailable, and a scale
 * down of the MD scales the old MachineSet down at once although surge is already exceeded.
 */
const SEQUENCES: { name: string; start: SeqScope; desired: string[]; results: string[]; breaches?: string[] }[] = [
  {
    name: 'Regular rollout, 3 Replicas, maxSurge 1, maxUnavailable 0',
    start: initialScope(names(1, 3), 1, 0),
    desired: names(4, 6),
    results: [
      'md 3/3 | ms1 3/3 (m1,m2,m3) | ms2 0/1 ()',
      'md 4/3 | ms1 3/2 (m1,m2,m3) | ms2 1/1 (m4)',
      'md 3/3 | ms1 2/2 (m2,m3) | ms2 1/2 (m4)',
      'md 4/3 | ms1 2/1 (m2,m3) | ms2 2/2 (m4,m5)',
      'md 3/3 | ms1 1/1 (m3) | ms2 2/3 (m4,m5)',
      'md 4/3 | ms1 1/0 (m3) | ms2 3/3 (m4,m5,m6)',
      'md 3/3 | ms1 0/0 () | ms2 3/3 (m4,m5,m6)',
    ],
  },
  {
    name: 'Regular rollout, 3 Replicas, maxSurge 0, maxUnavailable 1',
    start: initialScope(names(1, 3), 0, 1),
    desired: names(4, 6),
    results: [
      'md 3/3 | ms1 3/2 (m1,m2,m3) | ms2 0/0 ()',
      'md 2/3 | ms1 2/2 (m2,m3) | ms2 0/1 ()',
      'md 3/3 | ms1 2/1 (m2,m3) | ms2 1/1 (m4)',
      'md 2/3 | ms1 1/1 (m3) | ms2 1/2 (m4)',
      'md 3/3 | ms1 1/0 (m3) | ms2 2/2 (m4,m5)',
      'md 2/3 | ms1 0/0 () | ms2 2/3 (m4,m5)',
      'md 3/3 | ms1 0/0 () | ms2 3/3 (m4,m5,m6)',
    ],
  },
  {
    name: 'Regular rollout, 6 Replicas, maxSurge 3, maxUnavailable 1',
    start: initialScope(names(1, 6), 3, 1),
    desired: names(7, 12),
    results: [
      'md 6/6 | ms1 6/5 (m1,m2,m3,m4,m5,m6) | ms2 0/3 ()',
      'md 8/6 | ms1 5/2 (m2,m3,m4,m5,m6) | ms2 3/4 (m7,m8,m9)',
      'md 6/6 | ms1 2/1 (m5,m6) | ms2 4/6 (m7,m8,m9,m10)',
      'md 7/6 | ms1 1/0 (m6) | ms2 6/6 (m7,m8,m9,m10,m11,m12)',
      'md 6/6 | ms1 0/0 () | ms2 6/6 (m7,m8,m9,m10,m11,m12)',
    ],
  },
  {
    name: 'Regular rollout, 6 Replicas, maxSurge 1, maxUnavailable 3',
    start: initialScope(names(1, 6), 1, 3),
    desired: names(7, 12),
    results: [
      'md 6/6 | ms1 6/3 (m1,m2,m3,m4,m5,m6) | ms2 0/1 ()',
      'md 4/6 | ms1 3/2 (m4,m5,m6) | ms2 1/4 (m7)',
      'md 6/6 | ms1 2/0 (m5,m6) | ms2 4/5 (m7,m8,m9,m10)',
      'md 5/6 | ms1 0/0 () | ms2 5/6 (m7,m8,m9,m10,m11)',
      'md 6/6 | ms1 0/0 () | ms2 6/6 (m7,m8,m9,m10,m11,m12)',
    ],
  },
  {
    name: 'Regular rollout, 6 Replicas, maxSurge 10, maxUnavailable 0',
    start: initialScope(names(1, 6), 10, 0),
    desired: names(7, 12),
    results: ['md 6/6 | ms1 6/6 (m1,m2,m3,m4,m5,m6) | ms2 0/6 ()', 'md 12/6 | ms1 6/0 (m1,m2,m3,m4,m5,m6) | ms2 6/6 (m7,m8,m9,m10,m11,m12)', 'md 6/6 | ms1 0/0 () | ms2 6/6 (m7,m8,m9,m10,m11,m12)'],
  },
  {
    name: 'Regular rollout, 6 Replicas, maxSurge 0, maxUnavailable 10',
    start: initialScope(names(1, 6), 0, 10),
    desired: names(7, 12),
    results: ['md 6/6 | ms1 6/0 (m1,m2,m3,m4,m5,m6) | ms2 0/0 ()', 'md 0/6 | ms1 0/0 () | ms2 0/6 ()', 'md 6/6 | ms1 0/0 () | ms2 6/6 (m7,m8,m9,m10,m11,m12)'],
  },
  {
    name: 'Regular rollout, 6 Replicas, maxSurge 3, maxUnavailable 1, scale up to 12',
    start: scope('v2', 12, 3, 1, [{ name: 'ms1', version: 'v1', spec: 3, machines: names(4, 6) }, { name: 'ms2', version: 'v2', spec: 3, machines: names(7, 9) }], 9),
    desired: names(7, 18),
    results: [
      'md 6/12 | ms1 3/3 (m4,m5,m6) | ms2 3/12 (m7,m8,m9)',
      'md 15/12 | ms1 3/0 (m4,m5,m6) | ms2 12/12 (m7,m8,m9,m10,m11,m12,m13,m14,m15,m16,m17,m18)',
      'md 12/12 | ms1 0/0 () | ms2 12/12 (m7,m8,m9,m10,m11,m12,m13,m14,m15,m16,m17,m18)',
    ],
    breaches: ['iteration 1: available 6 < 11'],
  },
  {
    name: 'Regular rollout, 12 Replicas, maxSurge 3, maxUnavailable 1, scale down to 6',
    start: scope('v2', 6, 3, 1, [{ name: 'ms1', version: 'v1', spec: 9, machines: names(4, 12) }, { name: 'ms2', version: 'v2', spec: 3, machines: names(13, 15) }], 15),
    desired: names(13, 18),
    results: [
      'md 12/6 | ms1 9/2 (m4,m5,m6,m7,m8,m9,m10,m11,m12) | ms2 3/3 (m13,m14,m15)',
      'md 5/6 | ms1 2/2 (m11,m12) | ms2 3/6 (m13,m14,m15)',
      'md 8/6 | ms1 2/0 (m11,m12) | ms2 6/6 (m13,m14,m15,m16,m17,m18)',
      'md 6/6 | ms1 0/0 () | ms2 6/6 (m13,m14,m15,m16,m17,m18)',
    ],
    breaches: ['iteration 1: replicas 12 > 9'],
  },
  {
    name: 'Regular rollout, 6 Replicas, maxSurge 3, maxUnavailable 1, change spec',
    start: scope('v3', 6, 3, 1, [{ name: 'ms1', version: 'v1', spec: 3, machines: names(4, 6) }, { name: 'ms2', version: 'v2', spec: 3, machines: names(7, 9) }], 9),
    desired: names(10, 15),
    results: [
      'md 6/6 | ms1 3/2 (m4,m5,m6) | ms2 3/3 (m7,m8,m9) | ms3 0/3 ()',
      'md 8/6 | ms1 2/0 (m5,m6) | ms2 3/2 (m7,m8,m9) | ms3 3/4 (m10,m11,m12)',
      'md 6/6 | ms1 0/0 () | ms2 2/1 (m8,m9) | ms3 4/6 (m10,m11,m12,m13)',
      'md 7/6 | ms1 0/0 () | ms2 1/0 (m9) | ms3 6/6 (m10,m11,m12,m13,m14,m15)',
      'md 6/6 | ms1 0/0 () | ms2 0/0 () | ms3 6/6 (m10,m11,m12,m13,m14,m15)',
    ],
  },
];

describe('rolling update sequences (v1.12 Test_RollingUpdateSequences golden logs, which v1.10 reproduces)', () => {
  for (const s of SEQUENCES) {
    it(s.name, () => {
      const r = runSequence(s.name, s.start, s.desired);
      expect(r.done).toBe(true);
      expect(r.plannerResults).toEqual(s.results);
      expect(r.breaches).toEqual(s.breaches ?? []);
    });
  }
  it('writes the golden-log format (3 replicas, maxSurge 1)', () => {
    const r = runSequence(SEQUENCES[0]!.name, SEQUENCES[0]!.start, SEQUENCES[0]!.desired);
    expect(r.log.slice(0, 16)).toEqual([
      '## Regular rollout, 3 Replicas, maxSurge 1, maxUnavailable 0',
      '',
      '[Test] Initial state',
      '  md, 3/3 replicas',
      '  - ms1, 3/3 replicas (m1,m2,m3)',
      '[Test] Rollout 3 replicas, MaxSurge=1, MaxUnavailable=0',
      '[MD controller] Iteration 1, Reconcile md',
      '[MD controller] - Input to rollout planner',
      '  md, 3/3 replicas',
      '  - ms1, 3/3 replicas (m1,m2,m3)',
      '[MD controller] - Result of rollout planner',
      '  md, 3/3 replicas',
      '  - ms1, 3/3 replicas (m1,m2,m3)',
      '  - ms2, 0/1 replicas ()',
      '[MS controller] Iteration 1, Reconcile ms1, 3/3 replicas (m1,m2,m3)',
      '[MS controller] Iteration 1, Reconcile ms2, 0/1 replicas ()',
    ]);
  });
});
