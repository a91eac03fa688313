/**
 * The workload clusters' system pods (docs/workload.md "System pods"): DaemonSet pods on every Node,
 * kubeadm's static pods as mirror pods on control-plane Nodes, coredns / ovn-central / kube-ovn-controller
 * through ReplicaSets, all Ready with their Node.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node } from '../../src/product/api/core.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import { applyObject, loadManifestPath } from '../../src/harness/manifests/index.js';
import { createTestbed, type Testbed } from '../../src/harness/testbed/index.js';
import { ANN_CONFIG_MIRROR, LABEL_ROLE_CONTROL_PLANE, podReady, type Pod } from '../../src/world/workload/pods.js';
import { daemonSetPodName, mirrorPodName } from '../../src/world/workload/system-pods.js';
import { bootWorkerCluster, NS } from './fixture.js';

const CLUSTER = fileURLToPath(new URL('../../scenarios/manifests/cluster', import.meta.url));

function pods(tb: Testbed, cluster = 'demo'): Pod[] {
  return tb.env.workloads.store(NS, cluster).listSync<Pod>('Pod', { namespace: 'kube-system' });
}

describe('OVN-4, MD-4: system pods of a worker-only cluster', () => {
  let tb: Testbed;
  beforeAll(async () => {
    tb = await bootWorkerCluster();
    await tb.sim.advance(60_000);
  });
  afterAll(async () => tb?.close());

  it('kube-proxy, kube-ovn-cni and ovs-ovn on every Node, Ready, owned by their DaemonSet', () => {
    const nodes = tb.env.workloads.store(NS, 'demo').listSync<Node>('Node');
    expect(nodes).toHaveLength(3);
    const all = pods(tb);
    for (const n of nodes) {
      for (const ds of ['kube-proxy', 'kube-ovn-cni', 'ovs-ovn']) {
        const p = all.find((x) => x.metadata.name === daemonSetPodName(ds, n.metadata.name));
        expect(p, `${ds} on ${n.metadata.name}`).toBeDefined();
        expect(p!.spec.nodeName).toBe(n.metadata.name);
        expect(p!.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'DaemonSet', name: ds, controller: true });
        expect(podReady(p!)).toBe(true);
        expect(p!.status?.hostIP).toBe(n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address);
      }
      // Workers carry no role label (kubeadm labels only control-plane Nodes).
      expect(Object.keys(n.metadata.labels ?? {}).filter((k) => k.startsWith('node-role.kubernetes.io/'))).toEqual([]);
    }
    // No control-plane Nodes: no mirror pods.
    expect(all.filter((p) => p.metadata.annotations && ANN_CONFIG_MIRROR in p.metadata.annotations)).toEqual([]);
  });

  it('coredns (2) is scheduled on Ready Nodes through a ReplicaSet; ovn-central / kube-ovn-controller run on the control plane outside the model', () => {
    const all = pods(tb);
    const coredns = all.filter((p) => p.metadata.labels?.['k8s-app'] === 'kube-dns');
    expect(coredns).toHaveLength(2);
    for (const p of coredns) {
      expect(p.metadata.ownerReferences?.[0]?.kind).toBe('ReplicaSet');
      expect(podReady(p)).toBe(true);
    }
    for (const app of ['ovn-central', 'kube-ovn-controller']) expect(all.filter((p) => p.metadata.labels?.app === app)).toHaveLength(0);
    const store = tb.env.workloads.store(NS, 'demo');
    const dep = store.getSync<KubeObject & { status?: { readyReplicas?: number } }>({ kind: 'Deployment', namespace: 'kube-system', name: 'coredns' });
    expect(dep?.status?.readyReplicas).toBe(2);
    const ds = store.getSync<KubeObject & { status?: { numberReady?: number; desiredNumberScheduled?: number } }>({ kind: 'DaemonSet', namespace: 'kube-system', name: 'kube-proxy' });
    expect(ds?.status).toMatchObject({ numberReady: 3, desiredNumberScheduled: 3 });
  });
});

describe('OVN-4, MD-4: system pods of a cluster with a KubeadmControlPlane', () => {
  let tb: Testbed;
  beforeAll(async () => {
    tb = await createTestbed({ seed: 5 });
    for (const m of loadManifestPath(CLUSTER)) await applyObject(tb.env.mgmt, m.obj, NS);
    const ok = await tb.env.sim.runUntil(async () => {
      const nodes = tb.env.workloads.store(NS, 'demo').listSync<Node>('Node');
      return nodes.length >= 4 && nodes.every((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    }, 60 * 60_000);
    expect(ok.ok).toBe(true);
    await tb.sim.advance(60_000);
  }, 120_000);
  afterAll(async () => tb?.close());

  it('control-plane Nodes: role label and taint; static pods as mirror pods named <component>-<node>, owned by the Node', () => {
    const nodes = tb.env.workloads.store(NS, 'demo').listSync<Node>('Node');
    const cps = nodes.filter((n) => n.metadata.labels && LABEL_ROLE_CONTROL_PLANE in n.metadata.labels);
    expect(cps.length).toBeGreaterThanOrEqual(1);
    const all = pods(tb);
    for (const n of cps) {
      expect(n.spec.taints).toContainEqual({ key: LABEL_ROLE_CONTROL_PLANE, effect: 'NoSchedule' });
      for (const comp of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']) {
        const p = all.find((x) => x.metadata.name === mirrorPodName(comp, n.metadata.name));
        expect(p, `${comp} on ${n.metadata.name}`).toBeDefined();
        expect(p!.metadata.annotations?.[ANN_CONFIG_MIRROR]).toBeTruthy();
        expect(p!.metadata.labels).toMatchObject({ component: comp, tier: 'control-plane' });
        expect(p!.metadata.ownerReferences?.[0]).toMatchObject({ apiVersion: 'v1', kind: 'Node', name: n.metadata.name, uid: n.metadata.uid, controller: true });
        expect(podReady(p!)).toBe(true);
        if (comp === 'kube-apiserver') expect(p!.spec.containers[0]!.image).toBe(`registry.k8s.io/kube-apiserver:${n.status?.nodeInfo?.kubeletVersion}`);
      }
    }
    // ovn-central runs on the masters (kube-ovn/role=master, set on control-plane Nodes); coredns tolerates the control-plane taint.
    const central = all.filter((p) => p.metadata.labels?.app === 'ovn-central');
    expect(central.length).toBe(Math.min(3, cps.length));
    for (const p of central) expect(cps.map((n) => n.metadata.name)).toContain(p.spec.nodeName);
  });
});
