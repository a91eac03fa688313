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
description: The first control plane Machine of the KubeadmControlPlane fixture gets its Node and KCP reports initialized, then scales to three with healthy etcd members.
rules: [KCP-1, KCP-2, BOOT-2, BOOT-3]
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

  it('the first control plane Machine gets its Node, KCP reports initialized, then scales to three with EtcdClusterHealthy True', async () => {
    const r = await runScenario(loadScenario(join('scenarios', 'kcp-init-upstream.yaml'), SCENARIO), backend!.factory);
    process.stdout.write(`kcp-init on upstream (speed ${SPEED}): ${(r.wallMs / 1000).toFixed(1)} s wall (${r.ok ? 'pass' : 'FAIL'})\n`);
    const failed = r.steps.filter((s) => !s.ok).map((s) => `step ${s.index} (${s.title}): ${s.error ?? ''}\n${s.detail.join('\n')}`).join('\n');
    expect(r.ok, failed).toBe(true);
    expect(r.steps.map((s) => s.ok)).toEqual(r.steps.map(() => true));
  }, 600_000);
});
