/**
 * The MD-4 drain-order invariant (src/harness/scenario/drain-order.ts) holds the Machine controller to a drain only where
 * upstream drains (cluster-api v1.10 reconcileDelete: isDeleteNodeAllowed, isNodeDrainAllowed): a pod left on the
 * Node is not reported when upstream deletes the infrastructure without a (complete) drain. Each case leaves an
 * evictable pod on the Node while the infrastructure goes, and shows that it is still there (so the check had
 * something to see). The bug it does report is in test/library/contract-nodes.test.ts (the planted drain that
 * evicts nothing).
 */
import { describe, expect, it } from 'vitest';
import { LABEL_CLUSTER_NAME, LABEL_CONTROL_PLANE, type Machine } from '../../src/product/api/capi.js';
import type { HCSMachine } from '../../src/product/api/hcs.js';
import type { KubeClient } from '../../src/core/kube/client.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import { DrainOrderTracker } from '../../src/harness/scenario/drain-order.js';
import type { Testbed } from '../../src/harness/testbed/index.js';
import { runningCluster } from './fixtures.js';

const NS = 'cpaas-system';

/** An unmanaged pod (a drain evicts it, with a warning) bound to `node`. */
function appPod(node: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'default', name: 'app' }, spec: { nodeName: node, containers: [{ name: 'app', image: 'app:1' }] }, status: { phase: 'Running' } } as KubeObject;
}

/** Delete one worker Machine (after `prepare` changed it) and run until its HCSMachine is being deleted or gone; judge at every instant. */
async function deleteWorker(tb: Testbed, prepare: (m: Machine, workload: KubeClient) => Promise<Machine> = async (m) => m): Promise<{ findings: string[]; podLeft: boolean }> {
  const tracker = new DrainOrderTracker(tb.world);
  const workload = tb.world.workloads.client(NS, 'demo');
  const m = tb.env.mgmt.listSync<Machine>('Machine').find((x) => x.status?.nodeRef)!;
  const node = m.status!.nodeRef!.name;
  await workload.create(appPod(node));
  await tb.env.mgmt.update(await prepare(structuredClone(m), workload));
  await tb.env.mgmt.delete({ kind: 'Machine', namespace: NS, name: m.metadata.name });
  const findings: string[] = [];
  const infraGoing = (): boolean => {
    const hm = tb.env.mgmt.listSync<HCSMachine>('HCSMachine').find((x) => x.metadata.name === m.spec.infrastructureRef.name);
    return !hm || !!hm.metadata.deletionTimestamp;
  };
  const r = await tb.sim.runUntil(infraGoing, 3_600_000, async () => {
    findings.push(...(await tracker.findings()).map((f) => `${f.rule}: ${f.message}`));
  });
  expect(r.ok, 'the infrastructure machine starts to go').toBe(true);
  findings.push(...(await tracker.findings()).map((f) => `${f.rule}: ${f.message}`));
  const podLeft = !!(await workload.get({ kind: 'Pod', namespace: 'default', name: 'app' }));
  return { findings, podLeft };
}

/** A control plane Machine of the cluster, so that upstream's isDeleteNodeAllowed allows the drain ("no control plane members" otherwise). */
async function addControlPlaneMember(tb: Testbed): Promise<void> {
  await tb.env.mgmt.create({
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'Machine',
    metadata: { namespace: NS, name: 'cp-member', labels: { [LABEL_CLUSTER_NAME]: 'demo', [LABEL_CONTROL_PLANE]: '' } },
    spec: { clusterName: 'demo', bootstrap: { dataSecretName: 'none' }, infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'HCSMachine', name: 'cp-member-infra' } },
  } as KubeObject);
}

describe('MD-4 drain order: no finding where upstream does not drain', () => {
  it('a cluster without control plane Machines: the Node is neither drained nor deleted (isDeleteNodeAllowed)', { timeout: 60_000 }, async () => {
    const tb = await runningCluster();
    try {
      const r = await deleteWorker(tb);
      expect(r.podLeft).toBe(true);
      expect(r.findings).toEqual([]);
    } finally {
      await tb.close();
    }
  });

  it('the exclude-node-draining annotation (isNodeDrainAllowed)', { timeout: 60_000 }, async () => {
    const tb = await runningCluster();
    try {
      await addControlPlaneMember(tb);
      const r = await deleteWorker(tb, async (m) => ({ ...m, metadata: { ...m.metadata, annotations: { ...m.metadata.annotations, 'machine.cluster.x-k8s.io/exclude-node-draining': '' } } }));
      expect(r.podLeft).toBe(true);
      expect(r.findings).toEqual([]);
    } finally {
      await tb.close();
    }
  });

  it('nodeDrainTimeout exceeded while the evictions are refused (nodeDrainTimeoutExceeded)', { timeout: 60_000 }, async () => {
    const tb = await runningCluster();
    try {
      await addControlPlaneMember(tb);
      const r = await deleteWorker(tb, async (m, workload) => {
        // The Node's budget allows no eviction (src/world/workload/drain.ts); the drain gives up after 1m.
        const n = await workload.get<KubeObject>({ kind: 'Node', name: m.status!.nodeRef!.name });
        await workload.update({ ...n!, metadata: { ...n!.metadata, annotations: { ...n!.metadata.annotations, 'testbed.hcs/drain-blocked': 'true' } } });
        return { ...m, spec: { ...m.spec, nodeDrainTimeout: '1m' } };
      });
      expect(r.podLeft).toBe(true);
      expect(r.findings).toEqual([]);
    } finally {
      await tb.close();
    }
  });

  it('…and with a drain that completes, the pod is evicted before the infrastructure goes: nothing to report either', { timeout: 60_000 }, async () => {
    const tb = await runningCluster();
    try {
      await addControlPlaneMember(tb);
      const r = await deleteWorker(tb);
      expect(r.podLeft).toBe(false);
      expect(r.findings).toEqual([]);
    } finally {
      await tb.close();
    }
  });
});
