/** The worker-cluster fixture of the scenario library, booted on a full embedded testbed. */
import { fileURLToPath } from 'node:url';
import type { Node } from '../../src/api/core.js';
import { runKubectl, type KubectlResult } from '../../src/kubectl/index.js';
import { applyObject, loadManifestPath } from '../../src/manifests/index.js';
import { createTestbed, type Testbed } from '../../src/testbed/index.js';

export const NS = 'cpaas-system';
export const MANIFESTS = fileURLToPath(new URL('../../scenarios/manifests/worker-cluster', import.meta.url));

export async function nodesReady(tb: Testbed, cluster = 'demo'): Promise<number> {
  const nodes = await tb.env.workloads.client(NS, cluster).list<Node>('Node');
  return nodes.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
}

/** createTestbed + `kubectl apply -f scenarios/manifests/worker-cluster`, then wait for 3 Ready workers. */
export async function bootWorkerCluster(seed = 11): Promise<Testbed> {
  const tb = await createTestbed({ seed });
  for (const m of loadManifestPath(MANIFESTS)) await applyObject(tb.env.mgmt, m.obj, NS);
  const ok = await tb.env.sim.runUntil(async () => (await nodesReady(tb)) === 3, 30 * 60_000);
  if (!ok.ok) throw new Error('worker cluster did not come up');
  return tb;
}

export function kubectl(tb: Testbed, cmd: string): Promise<KubectlResult> {
  return runKubectl(cmd, { mgmt: tb.env.mgmt, workloads: tb.env.workloads, clock: tb.env.clock, logs: (d) => tb.env.logs.text(d), cwd: MANIFESTS });
}
