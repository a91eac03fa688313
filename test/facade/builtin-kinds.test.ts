/**
 * Built-in kinds a workload cluster's API serves because Cluster API's managers use them
 * (KCP-2 rollouts on upstream KCP v1.10): kubeadm's RBAC, which KCP writes before a rollout
 * (controlplane/kubeadm/internal/workload_cluster_rbac.go), and VolumeAttachments, which the
 * Machine controller lists before it lets a Node's Machine go
 * (internal/controllers/machine/machine_controller.go shouldWaitForNodeVolumes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { EventLog } from '../../src/core/events.js';
import { SeededRng } from '../../src/core/rng.js';
import { startFacade, type Facade } from '../../src/world/facade/index.js';
import { EmbeddedStore } from '../../src/core/kube/embedded-store.js';
import { EmbeddedWorkloadClusters } from '../../src/world/embedded.js';

describe('KCP-2: RBAC and VolumeAttachments on a served workload cluster', () => {
  let facade: Facade;
  let base: string;
  const call = async (method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; json: Record<string, unknown> }> => {
    const r = await fetch(`${base}${path}`, { method, headers: { ...facade.authHeaders(), 'content-type': contentType }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return { status: r.status, json: (await r.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    const clock = new VirtualClock(Date.parse('2026-01-01T00:00:00Z'));
    const rng = new SeededRng(3);
    const workloads = new EmbeddedWorkloadClusters(clock, rng.fork('wl'), new EventLog(clock));
    workloads.store('cpaas-system', 'demo');
    facade = await startFacade({ mgmt: new EmbeddedStore({ clock, rng: rng.fork('f'), clusterName: 'unused' }), workloads, clock, tls: false });
    base = facade.clusterUrl('cpaas-system', 'demo');
  });
  afterAll(async () => facade?.close());

  it('kubeadm:get-nodes (ClusterRole + ClusterRoleBinding) and kube-system/kubeadm:kubelet-config (Role + RoleBinding) are created and read back', async () => {
    const rules = [{ verbs: ['get'], apiGroups: [''], resources: ['nodes'] }];
    expect((await call('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'kubeadm:get-nodes' }, rules })).status).toBe(201);
    const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kubeadm:get-nodes' };
    const subjects = [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:bootstrappers:kubeadm:default-node-token' }];
    expect((await call('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'kubeadm:get-nodes' }, roleRef, subjects })).status).toBe(201);
    expect((await call('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/roles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'kubeadm:kubelet-config' }, rules })).status).toBe(201);
    expect((await call('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'kubeadm:kubelet-config' }, roleRef: { ...roleRef, kind: 'Role', name: 'kubeadm:kubelet-config' }, subjects })).status).toBe(201);
    const got = await call('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/kubeadm:get-nodes');
    expect(got.json).toMatchObject({ kind: 'ClusterRole', rules });
    const rb = await call('GET', '/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings/kubeadm:kubelet-config');
    expect(rb.json).toMatchObject({ roleRef: { kind: 'Role', name: 'kubeadm:kubelet-config' }, subjects });
    const disc = await call('GET', '/apis/rbac.authorization.k8s.io/v1');
    expect((disc.json.resources as { name: string; namespaced: boolean }[]).map((r) => `${r.name}:${r.namespaced}`).sort()).toEqual(['clusterrolebindings:false', 'clusterroles:false', 'rolebindings:true', 'roles:true']);
  });

  it('VolumeAttachments (storage.k8s.io/v1, cluster-scoped): an empty list, none attach in the testbed', async () => {
    const list = await call('GET', '/apis/storage.k8s.io/v1/volumeattachments');
    expect(list.status).toBe(200);
    expect(list.json).toMatchObject({ kind: 'VolumeAttachmentList', items: [] });
  });
});
