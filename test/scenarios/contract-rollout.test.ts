/**
 * Negative test of the MD-1 rollout invariant with unhealthy machines (src/scenario/invariants.ts,
 * issue 22): during a rollout a MachineDeployment never deletes an available machine when that
 * leaves fewer than replicas - maxUnavailable available, unhealthy machines counted as unavailable.
 * scenarios/unhealthy-rollout.yaml stops one old worker's server before the rollout (its Node goes NotReady); the reference
 * model removes that one first (upstream cleanupUnhealthyReplicas + the delete policy's preference
 * for unhealthy machines) and passes. The planted bug — a MachineSet delete policy that prefers
 * healthy machines — removes a healthy one and fails with MD-1. Planted by wrapping the model's
 * delete policy (src/capi/delete-policy.ts) in this file only.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadScenario } from '../../src/scenario/parse.js';
import { runScenario, type ScenarioResult } from '../../src/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/testbed/index.js';

const planted = vi.hoisted(() => ({ healthyFirst: false }));

vi.mock('../../src/capi/delete-policy.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/capi/delete-policy.js')>();
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
      expect(r.steps.find((s) => !s.ok)!.error).toMatch(/MD-1: MachineDeployment cpaas-system\/demo-md-0: available machine demo-md-0-\S+ deleted during a rollout, leaving 1 available .* below replicas 3 - maxUnavailable 1/);
    } finally {
      planted.healthyFirst = false;
    }
  });
});
