/** Shared set-ups of the invariant tests. */
import { expect } from 'vitest';
import type { HCSMachine } from '../../src/product/api/hcs.js';
import { applyObject, loadManifestPath } from '../../src/harness/manifests/index.js';
import { createTestbed, type Testbed } from '../../src/harness/testbed/index.js';

/** A testbed (seed 5) with the worker fixture applied and run until its three HCSMachines are ready. */
export async function runningCluster(): Promise<Testbed> {
  const tb = await createTestbed({ seed: 5 });
  for (const m of loadManifestPath('scenarios/manifests/worker-cluster')) await applyObject(tb.env.mgmt, m.obj);
  const ok = await tb.sim.runUntil(() => tb.env.mgmt.listSync<HCSMachine>('HCSMachine').filter((m) => m.status?.ready).length === 3, 3_600_000);
  expect(ok.ok).toBe(true);
  return tb;
}
