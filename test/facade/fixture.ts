/**
 * A full testbed (createTestbed) with the worker-cluster fixture of the
 * scale-out scenario applied and run until the three workers are Running,
 * served by the HTTP facade.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFacade, type Facade } from '../../src/world/facade/index.js';
import type { Machine } from '../../src/product/api/capi.js';
import { applyObject, loadManifestPath } from '../../src/harness/manifests/index.js';
import { createTestbed, type Testbed } from '../../src/harness/testbed/index.js';

export const REPO = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
export const FIXTURES = join(REPO, 'scenarios', 'manifests');

export interface FacadeBed {
  tb: Testbed;
  facade: Facade;
  close(): Promise<void>;
}

export async function runningMachines(tb: Testbed): Promise<number> {
  const ms = await tb.env.mgmt.list<Machine>('Machine', { namespace: 'cpaas-system' });
  return ms.filter((m) => m.status?.phase === 'Running').length;
}

export async function startWorkerCluster(opts: { seed?: number; kubeconfigDir?: string } = {}): Promise<FacadeBed> {
  const tb = await createTestbed({ seed: opts.seed ?? 42 });
  for (const m of loadManifestPath(join(FIXTURES, 'worker-cluster'))) await applyObject(tb.env.mgmt, m.obj, m.obj.metadata.namespace);
  const r = await tb.sim.runUntil(async () => (await runningMachines(tb)) === 3, 30 * 60_000);
  if (!r.ok) throw new Error('fixture: the three workers did not reach Running');
  const facade = await startFacade({ mgmt: tb.env.mgmt, workloads: tb.env.workloads, logs: tb.env.logs, clock: tb.clock, ...(opts.kubeconfigDir ? { kubeconfigDir: opts.kubeconfigDir } : {}) });
  return {
    tb,
    facade,
    close: async () => {
      await facade.close();
      await tb.close();
    },
  };
}
