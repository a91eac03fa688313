/**
 * MD-4 drain through the workload cluster: deleting a worker Machine cordons its Node and evicts its pods
 * (DaemonSet-managed and mirror pods skipped, as cluster-api internal/controllers/machine/drain filters.go),
 * and the evicted ReplicaSet pods are rescheduled onto the other Ready Nodes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Machine, MachineDeployment } from '../../src/product/api/capi.js';
import { drainNode } from '../../src/world/workload/drain.js';
import { ANN_CONFIG_MIRROR, podReady, type Pod } from '../../src/world/workload/pods.js';
import type { Testbed } from '../../src/harness/testbed/index.js';
import { bootWorkerCluster, NS } from './fixture.js';

describe('drain evicts through the workload cluster; evicted pods are rescheduled', () => {
  let tb: Testbed;
  beforeAll(async () => {
    // With an active control plane Machine: upstream drains and deletes a worker's Node only then (isDeleteNodeAllowed).
    tb = await bootWorkerCluster(23, { controlPlaneMachine: true });
    await tb.sim.advance(60_000);
  });
  afterAll(async () => tb?.close());

  const wl = () => tb.env.workloads.store(NS, 'demo');
  const replicaPods = () => wl().listSync<Pod>('Pod', { namespace: 'kube-system' }).filter((p) => p.metadata.ownerReferences?.[0]?.kind === 'ReplicaSet');

  it('drainNode skips DaemonSet and mirror pods, evicts ReplicaSet and unmanaged pods', async () => {
    const node = replicaPods()[0]!.spec.nodeName!;
    // An unmanaged pod (kubectl run) and a fake mirror pod on the same node.
    await wl().create<Pod>({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'debug', namespace: 'default' }, spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }] }, status: { phase: 'Running' } });
    await wl().create<Pod>({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `static-web-${node}`, namespace: 'default', annotations: { [ANN_CONFIG_MIRROR]: 'x' } }, spec: { nodeName: node, containers: [{ name: 'c', image: 'nginx' }] }, status: { phase: 'Running' } });
    const before = replicaPods().filter((p) => p.spec.nodeName === node).map((p) => `kube-system/${p.metadata.name}`);
    expect(before.length).toBeGreaterThan(0);
    const r = await drainNode(wl(), node);
    expect(r.evicted.sort()).toEqual(['default/debug', ...before].sort());
    expect(r.warnings).toContain('evicting Pod that has no controller default/debug');
    expect(r.skipped).toContain(`default/static-web-${node}: mirror pod`);
    expect(r.skipped.filter((x) => x.endsWith('DaemonSet-managed'))).toHaveLength(3);
    expect(r.waiting).toEqual([]);
    await wl().delete({ kind: 'Pod', namespace: 'default', name: `static-web-${node}` });
    // Replacements: the ReplicaSets create new pods at once; they land on Ready Nodes.
    await tb.sim.advance(5_000);
    for (const p of replicaPods()) expect(podReady(p)).toBe(true);
  });

  it('scale in: the deleted Machine\'s Node is cordoned and drained, its ReplicaSet pods move to the remaining Nodes', async () => {
    const md = tb.env.mgmt.getSync<MachineDeployment>({ kind: 'MachineDeployment', namespace: NS, name: 'demo-md-0' })!;
    // Mark the machine whose node runs coredns for deletion, then scale in by one.
    const onNode = replicaPods().find((p) => p.metadata.labels?.['k8s-app'] === 'kube-dns')!.spec.nodeName!;
    const victim = tb.env.mgmt.listSync<Machine>('Machine', { namespace: NS }).find((m) => m.status?.nodeRef?.name === onNode)!;
    await tb.env.mgmt.update<Machine>({ ...victim, metadata: { ...victim.metadata, annotations: { ...(victim.metadata.annotations ?? {}), 'cluster.x-k8s.io/delete-machine': 'yes' } } });
    await tb.env.mgmt.update<MachineDeployment>({ ...md, spec: { ...md.spec, replicas: 2 } });
    const ok = await tb.sim.runUntil(async () => !wl().getSync({ kind: 'Node', name: onNode }), 30 * 60_000);
    expect(ok.ok).toBe(true);
    // The Machine controller deleted it (not the cloud node lifecycle, src/world/workload/node-lifecycle.ts).
    expect(tb.env.events.all().some((e) => e.type === 'machine.node-deleted' && (e.data as { node?: string }).node === onNode)).toBe(true);
    const drained = tb.env.events.all().find((e) => e.type === 'machine.node-drained' && (e.data as { node?: string }).node === onNode);
    expect(drained?.message).toMatch(/evicted [1-9]\d* pod\(s\) \(.*kube-system\/coredns-/);
    await tb.sim.advance(10_000);
    const pods = replicaPods();
    expect(pods.filter((p) => p.metadata.labels?.['k8s-app'] === 'kube-dns')).toHaveLength(2);
    for (const p of pods) {
      expect(p.spec.nodeName).not.toBe(onNode);
      expect(podReady(p)).toBe(true);
    }
    // Nothing is left on the removed Node (pod GC for the DaemonSet pods, the Node's mirror pods go with it).
    expect(wl().listSync<Pod>('Pod', { fieldSelector: `spec.nodeName=${onNode}` })).toEqual([]);
  });
});

describe('the worker fixture as it is (control plane outside Cluster API): no drain, the cloud deletes the Node', () => {
  let tb: Testbed;
  beforeAll(async () => {
    tb = await bootWorkerCluster(24);
    await tb.sim.advance(60_000);
  });
  afterAll(async () => tb?.close());

  it('scale in: no cordon, no eviction (upstream isDeleteNodeAllowed → errNoControlPlaneNodes); the Node goes once its server is gone (node lifecycle)', async () => {
    const wl = tb.env.workloads.store(NS, 'demo');
    const md = tb.env.mgmt.getSync<MachineDeployment>({ kind: 'MachineDeployment', namespace: NS, name: 'demo-md-0' })!;
    await tb.env.mgmt.update<MachineDeployment>({ ...md, spec: { ...md.spec, replicas: 2 } });
    const ok = await tb.sim.runUntil(async () => tb.env.mgmt.listSync<Machine>('Machine', { namespace: NS }).length === 2 && wl.listSync('Node').length === 2, 30 * 60_000);
    expect(ok.ok).toBe(true);
    const skipped = tb.env.events.all().filter((e) => e.type === 'machine.node-deletion-skipped');
    expect(skipped).toHaveLength(1);
    expect(skipped[0]!.data).toMatchObject({ cause: 'no control plane members' });
    const node = (skipped[0]!.data as { node: string }).node;
    const types = tb.env.events.all().filter((e) => (e.data as { node?: string } | undefined)?.node === node).map((e) => e.type);
    expect(types).not.toContain('machine.node-cordoned');
    expect(types).not.toContain('machine.node-drained');
    expect(types).not.toContain('machine.node-deleted');
    expect(types).toContain('node.deleted-by-cloud');
    // Its pods were never evicted: they went with the Node (pod GC), and the ReplicaSets replaced them elsewhere.
    expect(wl.listSync<Pod>('Pod', { fieldSelector: `spec.nodeName=${node}` })).toEqual([]);
  });
});
