/**
 * The KubeadmControlPlane fixture (scenarios/manifests/cluster) on the
 * upstream Cluster API v1.10.10 managers: how far it gets today (issue 16;
 * docs/capi.md "Compared with the upstream managers").
 *
 * Upstream KCP creates the first control plane Machine, CABPK renders the
 * kubeadm init, the TypeScript provider signs the kubelet certificate with
 * the RSA cluster CA KCP generated (BOOT-2), the guest's kubeadm init
 * verifies it (BOOT-3) and registers the Node; the harness points KCP's
 * `<cluster>-kubeconfig` at the served workload API (the site's load
 * balancer in front of spec.controlPlaneEndpoint) and plays kubeadm's
 * upload-config phase (`kube-system/kubeadm-config`), so the Machine gets
 * its nodeRef and KCP reports `status.initialized` and one ready replica.
 * Then KCP scales to three (KCP-2): its preflight checks pass because it
 * reads each member through `pods/etcd-<node>/portforward` on the served
 * workload API (src/facade/etcd-forward.ts), so EtcdClusterHealthy is True
 * (every Machine's EtcdMemberHealthy True, members matching the Machines).
 * Then control-plane-upgrade's infrastructure image update (a copied
 * HCSMachineTemplate and the document's KCP merge patch, maxSurge 0): KCP
 * moves the etcd leader off and removes each old member over the same path
 * (MoveLeader, MemberRemove) before deleting its Machine, and every
 * replacement comes back on the same hostname and persistent disk (KCP-1).
 * This needs kubeadm's RBAC kinds and VolumeAttachments served (KCP writes
 * the former before a rollout, the Machine controller lists the latter
 * before a Node's Machine goes: test/facade/builtin-kinds.test.ts).
 *
 * Run by `npm run test:upstream` (inside `unshare -n`); skipped, saying why,
 * without the binaries or outside a network namespace with only lo.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/scenario/parse.js';
import { runScenario } from '../../src/scenario/runner.js';
import { openBackend, type OpenBackend } from '../../src/testbed/backends.js';
import { upstreamProblem } from '../../src/testbed/upstream.js';

const SPEED = Number(process.env.HCS_TESTBED_UPSTREAM_SPEED ?? 20);
const skip = upstreamProblem();

const SCENARIO = `
name: kcp-init-upstream
description: The first control plane Machine of the KubeadmControlPlane fixture gets its Node and KCP reports initialized, scales to three with healthy etcd members, then rolls the infrastructure image (maxSurge 0).
rules: [KCP-1, KCP-2, BOOT-2, BOOT-3, DISK-3, DISK-8]
seed: 202
steps:
  - apply: manifests/cluster
  - name: the first control plane Machine has its Node; KCP initialized with one ready replica
    wait:
      - object: {kind: KubeadmControlPlane, name: demo-control-plane, path: status.initialized, equals: true}
      - object: {kind: KubeadmControlPlane, name: demo-control-plane, path: status.readyReplicas, equals: 1}
      - object: {kind: Cluster, name: demo, path: status.controlPlaneReady, equals: true}
    timeout: 1h
    rules: [KCP-1]
  - name: KCP scales to three; it reads the etcd members through pods/etcd-<node>/portforward and finds them healthy
    wait:
      - object: {kind: KubeadmControlPlane, name: demo-control-plane, path: status.readyReplicas, equals: 3}
      - condition: {kind: KubeadmControlPlane, name: demo-control-plane, type: EtcdClusterHealthy, status: "True"}
      - nodes: {cluster: demo, ready: true, count: 6}
    timeout: 2h
    rules: [KCP-2]
  - name: node-local state on every control plane machine's persistent disk
    write:
      hostnames: [demo-cp-1, demo-cp-2, demo-cp-3]
      path: /var/cpaas/marker
      content: "control plane state of {hostname}"
  - kubectl: kubectl apply -f manifests/cluster-upgrade/cp-template-v2.yaml -n cpaas-system
    expectOutput: [created]
  - name: the infrastructure image update (control-plane-upgrade's merge patch) rolls the control plane, maxSurge 0
    kubectl: kubectl patch kubeadmcontrolplane demo-control-plane -n cpaas-system --type='merge' -p='{"spec":{"machineTemplate":{"infrastructureRef":{"name":"demo-cp-template-v2"}}}}'
    expectOutput: [patched]
    rules: [KCP-2]
  - wait:
      - object: {kind: KubeadmControlPlane, name: demo-control-plane, path: status.updatedReplicas, equals: 3}
      - object: {kind: KubeadmControlPlane, name: demo-control-plane, path: status.readyReplicas, equals: 3}
      - condition: {kind: KubeadmControlPlane, name: demo-control-plane, type: EtcdClusterHealthy, status: "True"}
      - machines: {cluster: demo, phase: Running, count: 6}
      - nodes: {cluster: demo, ready: true, count: 6}
    timeout: 2h
    rules: [KCP-2]
  - name: KCP removed each old member (MemberRemove) before deleting its Machine; the replacements took the same hostnames and disks
    expect:
      - persistentDisks: {pool: demo-cp-pool}
      - markers: {path: /var/cpaas/marker}
      - events: {type: event.NoFreePoolEntry, count: 0}
      - events: {source: cloud, type: server.deleted, count: 3}
      - nodes: {cluster: demo, count: 6}
    rules: [KCP-1, DISK-3, DISK-8]
  - name: kubeadm init on demo-cp-1 with the kubelet certificate signed by KCP's cluster CA
    expect:
      - events: {source: guest, type: guest.joined, contains: "kubeadm init succeeded; Node demo-cp-1", count: 1}
      - events: {source: guest, type: guest.join-failed, count: 0}
      - events: {source: workload, type: harness.kubeconfig-served, count: 1}
      - events: {source: workload, type: harness.kubeadm-config-uploaded, count: 1}
    rules: [BOOT-2, BOOT-3]
`;

describe.skipIf(!!skip)(`the KubeadmControlPlane fixture on upstream Cluster API v1.10.10${skip ? ` [skipped: ${skip}]` : ''}`, () => {
  let backend: OpenBackend | undefined;
  beforeAll(async () => {
    backend = await openBackend({ backend: 'apiserver', capi: 'upstream', speed: SPEED });
  }, 300_000);
  afterAll(async () => {
    await backend?.close();
  }, 120_000);

  it('the first control plane Machine gets its Node, KCP reports initialized, scales to three with EtcdClusterHealthy True, then rolls the infrastructure image on the same hostnames', async () => {
    const r = await runScenario(loadScenario(join('scenarios', 'kcp-init-upstream.yaml'), SCENARIO), backend!.factory);
    process.stdout.write(`kcp-init on upstream (speed ${SPEED}): ${(r.wallMs / 1000).toFixed(1)} s wall (${r.ok ? 'pass' : 'FAIL'})\n`);
    const failed = r.steps.filter((s) => !s.ok).map((s) => `step ${s.index} (${s.title}): ${s.error ?? ''}\n${s.detail.join('\n')}`).join('\n');
    expect(r.ok, failed).toBe(true);
    expect(r.steps.map((s) => s.ok)).toEqual(r.steps.map(() => true));
  }, 900_000);
});
