/** The worker-cluster fixture of the scenario library, booted on a full embedded testbed. */
import { fileURLToPath } from 'node:url';
import { CAPI_VERSION, LABEL_CLUSTER_NAME, LABEL_CONTROL_PLANE, type Machine } from '../../src/product/api/capi.js';
import type { Node } from '../../src/product/api/core.js';
import { INFRA_VERSION } from '../../src/product/api/hcs.js';
import { runKubectl, type KubectlResult } from '../../src/harness/kubectl/index.js';
import { applyObject, loadManifestPath } from '../../src/harness/manifests/index.js';
import { createTestbed, type Testbed } from '../../src/harness/testbed/index.js';

export const NS = 'cpaas-system';
export const MANIFESTS = fileURLToPath(new URL('../../scenarios/manifests/worker-cluster', import.meta.url));

export async function nodesReady(tb: Testbed, cluster = 'demo'): Promise<number> {
  const nodes = await tb.env.workloads.client(NS, cluster).list<Node>('Node');
  return nodes.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
}

/**
 * A stand-alone control plane Machine of cluster demo (labelled
 * `cluster.x-k8s.io/control-plane`; its HCSMachine never exists, so it stays
 * Provisioning). The worker fixture's control plane is outside Cluster API,
 * and upstream then neither drains nor deletes a worker's Node
 * (machine_controller.go isDeleteNodeAllowed → errNoControlPlaneNodes; it
 * counts active control plane Machines, not their readiness). Tests of the
 * drain add this one.
 */
export function controlPlaneMachine(): Machine {
  return {
    apiVersion: CAPI_VERSION,
    kind: 'Machine',
    metadata: { name: 'demo-cp-0', namespace: NS, labels: { [LABEL_CLUSTER_NAME]: 'demo', [LABEL_CONTROL_PLANE]: '' } },
    spec: {
      clusterName: 'demo',
      version: 'v1.31.6',
      bootstrap: { dataSecretName: 'demo-cp-0-bootstrap' },
      infrastructureRef: { apiVersion: INFRA_VERSION, kind: 'HCSMachine', name: 'demo-cp-0' },
    },
  };
}

/** createTestbed + `kubectl apply -f scenarios/manifests/worker-cluster`, then wait for 3 Ready workers. */
export async function bootWorkerCluster(seed = 11, opts: { controlPlaneMachine?: boolean } = {}): Promise<Testbed> {
  const tb = await createTestbed({ seed });
  for (const m of loadManifestPath(MANIFESTS)) await applyObject(tb.env.mgmt, m.obj, NS);
  if (opts.controlPlaneMachine) await tb.env.mgmt.create(controlPlaneMachine());
  const ok = await tb.env.sim.runUntil(async () => (await nodesReady(tb)) === 3, 30 * 60_000);
  if (!ok.ok) throw new Error('worker cluster did not come up');
  return tb;
}

export function kubectl(tb: Testbed, cmd: string): Promise<KubectlResult> {
  return runKubectl(cmd, { mgmt: tb.env.mgmt, workloads: tb.env.workloads, clock: tb.env.clock, logs: (d) => tb.env.logs.text(d), cwd: MANIFESTS });
}
