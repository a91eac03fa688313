/**
 * Negative test of the MD-1 rollout invariant with unhealthy machines (src/scenario/invariants.ts,
 * issue 22): during a rollout a MachineDeployment never deletes an available machine when that
 * leaves fewer than replicas - maxUnavailable available, unhealthy machines counted as unavailable.
 * One old worker's server is stopped before the rollout (its Node goes NotReady); the reference
 * model removes that one first (upstream cleanupUnhealthyReplicas + the delete policy's preference
 * for unhealthy machines) and passes. The planted bug — a MachineSet delete policy that prefers
 * healthy machines — removes a healthy one and fails with MD-1. Planted by wrapping the model's
 * delete policy (src/capi/delete-policy.ts) in this file only.
 */
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { CloudEngine } from '../../mock-hcs/src/cloud.js';
import { loadScenario } from '../../src/scenario/parse.js';
import { runScenario, type ScenarioResult, type TestbedFactory } from '../../src/scenario/runner.js';
import { embeddedTestbedFactory, type Testbed } from '../../src/testbed/index.js';

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

const SCENARIO = `name: unhealthy-old-machines-rollout
description: one old worker is down when the rollout starts
rules: [MD-1]
seed: 7
steps:
  - apply: manifests/worker-cluster
  - wait:
      - machines: {deployment: demo-md-0, phase: Running, count: 3}
      - nodes: {cluster: demo, ready: true, count: 3}
    timeout: 30m
  - name: the server of demo-worker-1 is stopped
    advance: 1000
  - wait:
      - nodes: {cluster: demo, ready: true, count: 2}
    timeout: 10m
  - kubectl: kubectl apply -f manifests/upgrade/worker-template-v2.yaml -n cpaas-system
  - kubectl: >-
      kubectl patch machinedeployment demo-md-0 -n cpaas-system --type='merge'
      -p='{"spec":{"template":{"spec":{"infrastructureRef":{"name":"demo-worker-template-v2"}}}}}'
  - wait:
      - machineDeployment: {name: demo-md-0, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3}
      - nodes: {cluster: demo, ready: true, count: 3}
    timeout: 2h
`;

async function run(): Promise<ScenarioResult> {
  const base = embeddedTestbedFactory({});
  const factory: TestbedFactory = async (seed) => {
    const tb = (await base(seed)) as Testbed;
    tb.events.subscribe((e) => {
      if (e.type !== 'step.start' || e.data?.step !== 3) return;
      const hv = tb.cloud.hypervisor;
      const s = hv.listServers().find((x) => hv.server(x.id)?.metadata['hcs.io/hostname'] === 'demo-worker-1');
      // The cloud's own ECS action (os-stop HARD), in step with the virtual clock.
      if (s) (hv as unknown as CloudEngine).serverAction(hv.server(s.id)!.projectId, { 'os-stop': { servers: [{ id: s.id }], type: 'HARD' } });
    });
    return tb;
  };
  return runScenario(loadScenario(join(resolve('scenarios'), 'unhealthy-old-machines-rollout.yaml'), SCENARIO), factory);
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
