/**
 * A paused MachineDeployment (issue 26), as cluster-api v1.10.10:
 * machinedeployment_controller.go reconcile (`if md.Spec.Paused { return
 * r.sync(...) }`) and machinedeployment_sync.go `sync()` / `scale()` with
 * mdutil FindOneActiveOrLatest, IsSaturated, GetProportion and
 * getMachineSetFraction (src/world/capi/rollout-planner.ts planPausedScale).
 *
 * The table cases are the proportional-scaling cases of the deployment
 * controller's TestScale (kubernetes pkg/controller/deployment/sync_test.go,
 * which Cluster API's scale() was ported from), with the annotations those
 * tests give each set: the old deployment's replicas + maxSurge. The
 * controller cases run on the virtual clock (test/capi/fixtures.ts).
 */
import { describe, expect, it } from 'vitest';
import type { MachineDeployment, MachineSet } from '../../src/product/api/capi.js';
import { ANN_REVISION } from '../../src/world/capi/index.js';
import { isSaturated, machineSetFraction, planPausedScale, type RolloutDeployment, type RolloutMachineSet } from '../../src/world/capi/rollout-planner.js';
import { CLUSTER, NS, createWorld, machineDeployment, machineTemplate, machines, runningCount, type World } from './fixtures.js';

// kubernetes' TestScale deployments: maxSurge 0, maxUnavailable 0 (ResolveFenceposts then makes unavailable 1).
const dep = (replicas: number): RolloutDeployment => ({ replicas, strategy: 'RollingUpdate', maxSurge: 0, maxUnavailable: 0 });
/** A MachineSet with spec replicas, created at `created`, annotated for a deployment of `annotated` replicas (surge 0). */
const set = (name: string, spec: number, created: number, annotated: number, available = spec): RolloutMachineSet => ({
  name,
  created,
  specReplicas: spec,
  statusReplicas: spec,
  availableReplicas: available,
  maxReplicasAnnotation: annotated,
  desiredReplicasAnnotation: annotated,
});
const sizes = (p: ReturnType<typeof planPausedScale>): Record<string, number> => Object.fromEntries(p.calls.map((c) => [c.name, c.to]));

describe('planPausedScale (machinedeployment_sync.go scale)', () => {
  const NEW = 3;
  const OLD = 2;
  const OLDER = 1;
  it.each([
    // name, replicas, annotated (old deployment), new, old sets, expected sizes
    ['normal scaling event: 10 -> 12 (the only active MachineSet)', 12, 10, ['v1', 10], [], { v1: 12 }],
    ['normal scaling event: 10 -> 5', 5, 10, ['v1', 10], [], { v1: 5 }],
    ['proportional scaling: 5 -> 10', 10, 5, ['v2', 2], [['v1', 3, OLD]], { v2: 4, v1: 6 }],
    ['proportional scaling: 5 -> 3', 3, 5, ['v2', 2], [['v1', 3, OLD]], { v2: 1, v1: 2 }],
    ['proportional scaling: 9 -> 4', 4, 9, ['v2', 8], [['v1', 1, OLD]], { v2: 4, v1: 0 }],
    ['proportional scaling: 7 -> 10', 10, 7, ['v3', 2], [['v2', 3, OLD], ['v1', 2, OLDER]], { v3: 3, v2: 4, v1: 3 }],
    ['proportional scaling: 13 -> 8', 8, 13, ['v3', 2], [['v2', 8, OLD], ['v1', 3, OLDER]], { v3: 1, v2: 5, v1: 2 }],
    ['leftover distribution: 3 -> 4 (the newest of equal sets first when scaling up)', 4, 3, ['v3', 1], [['v2', 1, OLD], ['v1', 1, OLDER]], { v3: 2, v2: 1, v1: 1 }],
    ['leftover distribution: 4 -> 3 (the largest first when scaling down)', 3, 4, ['v3', 1], [['v2', 1, OLD], ['v1', 2, OLDER]], { v3: 1, v2: 1, v1: 1 }],
    ['scaling down to zero', 0, 6, ['v2', 3], [['v1', 3, OLD]], { v2: 0, v1: 0 }],
  ] as const)('%s', (_name, replicas, annotated, [newName, newSpec], olds, want) => {
    const p = planPausedScale(
      dep(replicas),
      set(newName, newSpec, NEW, annotated),
      olds.map(([n, s, c]) => set(n, s, c, annotated)),
      annotated,
    );
    expect(sizes(p)).toEqual(want);
  });

  it('one active MachineSet already at the replicas: no call at all (its annotations stay)', () => {
    expect(planPausedScale(dep(3), set('v2', 3, NEW, 2), [set('v1', 0, OLD, 2)], 3).calls).toEqual([]);
  });

  it('no active MachineSet: the new one, else the newest old one, gets the replicas', () => {
    expect(sizes(planPausedScale(dep(2), set('v2', 0, NEW, 0), [set('v1', 0, OLD, 0)], 0))).toEqual({ v2: 2 });
    expect(sizes(planPausedScale(dep(2), undefined, [set('v1', 0, OLDER, 0), set('v0', 0, OLD, 0)], 0))).toEqual({ v0: 2 });
  });

  it('a saturated new MachineSet scales every active old one to 0 (adoption case)', () => {
    const newMS = set('v2', 3, NEW, 3);
    expect(isSaturated(dep(3), newMS)).toBe(true);
    expect(isSaturated(dep(3), { ...newMS, availableReplicas: 2 })).toBe(false);
    expect(sizes(planPausedScale(dep(3), newMS, [set('v1', 2, OLD, 3)], 5))).toEqual({ v1: 0 });
  });

  it('OnDelete with several active MachineSets: no proportional scaling', () => {
    expect(planPausedScale({ replicas: 6, strategy: 'OnDelete' }, set('v2', 1, NEW, 3), [set('v1', 2, OLD, 3)], 3).calls).toEqual([]);
  });

  it('without the max-replicas annotation the fraction falls back to the deployment status.replicas', () => {
    const ms: RolloutMachineSet = { name: 'v1', created: OLD, specReplicas: 3, statusReplicas: 3, availableReplicas: 3 };
    expect(machineSetFraction(ms, dep(10), 5)).toBe(3); // round(3·10/5) − 3
    expect(machineSetFraction(ms, dep(10), 6)).toBe(2); // round(3·10/6) − 3
  });

  it('rounds half away from zero (Go math.Round), the sign of the change kept', () => {
    // 1·3/2 = 1.5 → 2: +1; scaling 2 → 1 with a set of 3 annotated 2: 3·1/2 = 1.5 → 2: −1
    expect(machineSetFraction(set('a', 1, OLD, 2), dep(3), 0)).toBe(1);
    expect(machineSetFraction(set('a', 3, OLD, 2), dep(1), 0)).toBe(-1);
  });
});

const MD = `${CLUSTER}-md-0`;
const TPL = `${CLUSTER}-worker-template`;
const MIN = 60_000;

function md(w: World): MachineDeployment {
  return w.mgmt.getSync<MachineDeployment>({ kind: 'MachineDeployment', namespace: NS, name: MD })!;
}
function sets(w: World): MachineSet[] {
  return w.mgmt.listSync<MachineSet>('MachineSet', { namespace: NS });
}
function byTemplate(w: World): Record<string, number> {
  return Object.fromEntries(sets(w).map((s) => [s.spec.template.spec.infrastructureRef.name, s.spec.replicas ?? 0]));
}
async function patchMD(w: World, spec: Record<string, unknown>): Promise<void> {
  await w.mgmt.patch({ kind: 'MachineDeployment', namespace: NS, name: MD }, 'merge', { spec });
}
async function settled(w: World, replicas: number, timeoutMs = 60 * MIN): Promise<void> {
  const r = await w.sim.runUntil(() => machines(w).length === replicas && runningCount(w) === replicas && md(w).status?.availableReplicas === replicas, timeoutMs);
  expect(r.ok, `not settled on ${replicas}: ${machines(w).map((m) => `${m.metadata.name}:${m.status?.phase}`).join(', ')}`).toBe(true);
}

describe('a paused MachineDeployment in the controllers (virtual clock)', () => {
  it('scaling while paused resizes the only MachineSet at once; a template change waits for resume (no rollout while paused)', async () => {
    const w = await createWorld(261);
    await w.mgmt.create(machineDeployment(3, { maxSurge: 1, maxUnavailable: 0 }));
    await settled(w, 3);
    await patchMD(w, { paused: true });
    await w.mgmt.create(machineTemplate(`${TPL}-v2`, 'img-v2'));
    await patchMD(w, { replicas: 5, template: { spec: { infrastructureRef: { name: `${TPL}-v2` } } } });
    await settled(w, 5);
    // No new MachineSet while paused; the one there took the new size and the new replicas annotations.
    expect(byTemplate(w)).toEqual({ [TPL]: 5 });
    expect(sets(w)[0]!.metadata.annotations).toMatchObject({ 'machinedeployment.clusters.x-k8s.io/desired-replicas': '5', 'machinedeployment.clusters.x-k8s.io/max-replicas': '6' });
    expect(w.events.all().filter((e) => e.type === 'machineset.scaled').map((e) => `${e.data?.from} -> ${e.data?.to}`)).toEqual(['0 -> 3', '3 -> 5']);
    await w.sim.advance(10 * MIN);
    expect(sets(w)).toHaveLength(1);
    expect(md(w).status).toMatchObject({ replicas: 5, updatedReplicas: 0, availableReplicas: 5 });
    await patchMD(w, { paused: false });
    const r = await w.sim.runUntil(() => byTemplate(w)[`${TPL}-v2`] === 5 && runningCount(w) === 5 && machines(w).length === 5, 90 * MIN);
    expect(r.ok, JSON.stringify(byTemplate(w))).toBe(true);
  }, 60_000);

  it('scaling while paused in the middle of a rollout resizes old and new MachineSets proportionally; the new one, re-annotated first, keeps its size', async () => {
    const w = await createWorld(262);
    await w.mgmt.create(machineDeployment(3, { maxSurge: 1, maxUnavailable: 0 }));
    await settled(w, 3);
    await w.mgmt.create(machineTemplate(`${TPL}-v2`, 'img-v2'));
    await patchMD(w, { template: { spec: { infrastructureRef: { name: `${TPL}-v2` } } } });
    const r = await w.sim.runUntil(() => sets(w).length === 2, MIN);
    expect(r.ok).toBe(true);
    await patchMD(w, { paused: true });
    expect(byTemplate(w)).toEqual({ [TPL]: 3, [`${TPL}-v2`]: 1 });
    await patchMD(w, { replicas: 6 });
    await w.sim.advance(MIN);
    // getNewMachineSet (updateMachineSet) re-annotates the new MachineSet with max-replicas 7 before scale():
    // its fraction is round(1·7/7) − 1 = 0; the old one's round(3·7/4) − 3 = +2, and the leftover +1 goes to the
    // largest, the old one. (kubernetes' Deployment would give 5 / 2: it keeps the new ReplicaSet's old annotations.)
    expect(byTemplate(w)).toEqual({ [TPL]: 6, [`${TPL}-v2`]: 1 });
    const newMS = sets(w).find((s) => s.spec.template.spec.infrastructureRef.name === `${TPL}-v2`)!;
    expect(newMS.metadata.annotations).toMatchObject({ 'machinedeployment.clusters.x-k8s.io/max-replicas': '7', [ANN_REVISION]: '2' });
    expect(md(w).metadata.annotations?.[ANN_REVISION]).toBe('2');
    await settled(w, 7);
    await w.sim.advance(10 * MIN);
    expect(byTemplate(w), 'still paused: no rollout step').toEqual({ [TPL]: 6, [`${TPL}-v2`]: 1 });
    await patchMD(w, { paused: false });
    const done = await w.sim.runUntil(() => byTemplate(w)[`${TPL}-v2`] === 6 && byTemplate(w)[TPL] === 0 && machines(w).length === 6 && runningCount(w) === 6, 120 * MIN);
    expect(done.ok, JSON.stringify(byTemplate(w))).toBe(true);
  }, 60_000);
});
