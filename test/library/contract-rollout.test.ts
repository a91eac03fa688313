/**
 * Negative test of the MD-1 rollout invariant with unhealthy machines (src/harness/scenario/invariants.ts,
 * issue 22): during a rollout a MachineDeployment never deletes an available machine when that
 * leaves fewer than replicas - maxUnavailable available, unhealthy machines counted as unavailable.
 * scenarios/unhealthy-rollout.yaml stops two old workers' servers before the rollout (their Nodes go NotReady); the reference
 * model removes those first, one at a time (upstream cleanupUnhealthyReplicas capped by maxUnavailable,
 * + the delete policy's preference for unhealthy machines) and passes. The planted bugs:
 * - a MachineSet delete policy that prefers healthy machines removes the healthy one and fails with
 *   MD-1 (the availability bound). Planted by wrapping the model's delete policy (src/world/capi/delete-policy.ts);
 * - a rollout planner whose cleanup of unhealthy old replicas ignores maxUnavailable (both unhealthy
 *   machines at once) fails with MD-1 from the MachineSets' spec.replicas against upstream's
 *   rolling-update plan (src/harness/scenario/md-rollout-plan.ts): removing unhealthy machines lowers no
 *   available count, so the availability bound cannot see it. Planted by wrapping the planner's
 *   `plan` (src/world/capi/rollout-planner.ts).
 * Both in this file only.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { oldScaleDownBound } from '../../src/harness/scenario/md-rollout-plan.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';

const planted = vi.hoisted(() => ({ healthyFirst: false, uncappedCleanup: false }));

vi.mock('../../src/world/capi/rollout-planner.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/world/capi/rollout-planner.js')>();
  return {
    ...real,
    plan: (...a: Parameters<typeof real.plan>) => {
      const [md, newMS, oldMSs] = a;
      if (!planted.uncappedCleanup || md.strategy !== 'RollingUpdate') return real.plan(...a);
      const p = real.newPlan(md, newMS, oldMSs);
      real.reconcileNewMachineSet(p);
      // The bug: every unhealthy old replica goes at once (no maxScaledDown cap), then the ordinary scale down.
      for (const ms of p.oldMSs) {
        const cur = p.scaleIntents[ms.name] ?? ms.specReplicas;
        if (cur > ms.availableReplicas) p.scaleIntents[ms.name] = ms.availableReplicas;
      }
      real.scaleDownOldMachineSetsForRollingUpdate(p);
      return p;
    },
  };
});

vi.mock('../../src/world/capi/delete-policy.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/world/capi/delete-policy.js')>();
  return {
    ...real,
    machinesToDelete: (...a: Parameters<typeof real.machinesToDelete>) => {
      if (!planted.healthyFirst) return real.machinesToDelete(...a);
      const [machines, diff] = a;
      return [...machines.filter((m) => real.isMachineHealthy(m)), ...machines.filter((m) => !real.isMachineHealthy(m))].slice(0, Math.max(0, diff));
    },
  };
});

async function run(): Promise<ScenarioResult> {
  const path = join(resolve('scenarios'), 'unhealthy-rollout.yaml');
  return runScenario(loadScenario(path, readFileSync(path, 'utf8')), embeddedTestbedFactory({}));
}

describe('MD-1: a rollout never deletes an available machine below replicas - maxUnavailable, unhealthy machines counted', () => {
  it('the reference model removes the unhealthy old machine first and passes', { timeout: 120_000 }, async () => {
    const r = await run();
    expect(r.steps.filter((s) => !s.ok).map((s) => `${s.title}: ${s.error}`)).toEqual([]);
    expect(r.ok).toBe(true);
  });

  it('a MachineSet that deletes a healthy machine while an unhealthy one is left fails with MD-1', { timeout: 120_000 }, async () => {
    planted.healthyFirst = true;
    try {
      const r = await run();
      expect(r.ok).toBe(false);
      expect(r.steps.find((s) => !s.ok)!.error).toMatch(/MD-1: MachineDeployment cpaas-system\/demo-md-0: available machine demo-md-0-\S+ deleted during a rollout, leaving 0 available .* below replicas 3 - maxUnavailable 1/);
    } finally {
      planted.healthyFirst = false;
    }
  });

  it('a rollout that removes every unhealthy old machine at once, past maxUnavailable, fails with MD-1 (old MachineSet spec.replicas)', { timeout: 120_000 }, async () => {
    planted.uncappedCleanup = true;
    try {
      const r = await run();
      expect(r.ok).toBe(false);
      expect(r.steps.find((s) => !s.ok)!.error).toMatch(
        /MD-1: MachineDeployment cpaas-system\/demo-md-0 scaled its old MachineSet demo-md-0-\S+ down 3 -> 1: 2 old replica\(s\) removed in one decision, but upstream's rolling update removes at most 1 \(minAvailable 2 .*maxScaledDown 1/,
      );
    } finally {
      planted.uncappedCleanup = false;
    }
  });
});

describe('MD-1: the old MachineSets\' scale-down bound of one rolling-update reconcile (upstream reconcileOldMachineSets)', () => {
  const ms = (name: string, revision: number, spec: number, available: number) => ({ name, revision, spec, available });
  it('caps the cleanup of unhealthy old replicas by maxScaledDown and the scale down by the available surplus', { timeout: 10_000 }, () => {
    // unhealthy-rollout: 3 replicas, maxUnavailable 1, two of three old machines unhealthy, the new MachineSet empty.
    expect(oldScaleDownBound({ replicas: 3, maxUnavailable: 1, machineSets: [ms('old', 1, 3, 1), ms('new', 2, 0, 0)] }).bound).toBe(1);
    // upstream's comment, case 1: 10 replicas, maxUnavailable 2, maxSurge 3; the new MachineSet's 5 machines crashloop:
    // 13 - 8 - 5 = 0, the old MachineSet is not scaled down although one of its machines failed.
    expect(oldScaleDownBound({ replicas: 10, maxUnavailable: 2, machineSets: [ms('old', 1, 8, 7), ms('new', 2, 5, 0)] }).bound).toBe(0);
    // ... after the rollback the good MachineSet is the new one (highest revision): 13 - 8 - 1 = 4 of the crashlooping ones may go.
    expect(oldScaleDownBound({ replicas: 10, maxUnavailable: 2, machineSets: [ms('crashloop', 2, 5, 0), ms('good', 3, 8, 7)] }).bound).toBe(4);
    // A healthy rollout: only the available surplus over minAvailable goes (4 available, minAvailable 2).
    expect(oldScaleDownBound({ replicas: 3, maxUnavailable: 1, machineSets: [ms('old', 1, 3, 3), ms('new', 2, 1, 1)] }).bound).toBe(2);
  });
});
