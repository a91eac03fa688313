/**
 * Negative tests of what makes a control plane node one (src/harness/scenario/control-plane-nodes.ts, issue 37):
 * each plants, inside the test only, one realistic bug of the guest (kubeadm's mark-control-plane phase) or of the
 * workload model (kubeadm's static pods, Kube-OVN's control plane replicas), runs a library scenario against it
 * and shows the run fails on the invariant with its rule ID — while the library passes them unmutated
 * (`npm run scenarios`, test/library/library.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario, type ScenarioResult } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';
import { SYSTEM_DEPLOYMENTS } from '../../src/world/workload/system-pods.js';

const TIMEOUT = 180_000;

const planted = vi.hoisted(() => ({
  /** kubeadm configs: 'no-cp-taint' drops the control plane taint; 'all-cp' marks every node a control plane node. */
  kubeadm: undefined as undefined | 'no-cp-taint' | 'all-cp',
  /** Pods: 'unbound-scheduler' leaves the kube-scheduler mirror pod unbound; 'etcd-tag' / 'apiserver-tag' give those static pods another image tag. */
  pods: undefined as undefined | 'unbound-scheduler' | 'etcd-tag' | 'apiserver-tag',
}));

vi.mock('../../src/world/guest/cloudinit.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/world/guest/cloudinit.js')>();
  return {
    ...real,
    parseKubeadmConfig: (text: string) => {
      const kc = real.parseKubeadmConfig(text);
      if (!kc) return kc;
      if (planted.kubeadm === 'no-cp-taint' && kc.controlPlane) return { ...kc, taints: [] };
      if (planted.kubeadm === 'all-cp') return { ...kc, controlPlane: true };
      return kc;
    },
  };
});

vi.mock('../../src/world/workload/pods.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/world/workload/pods.js')>();
  return {
    ...real,
    newPod: (...a: Parameters<typeof real.newPod>) => {
      const [t, node, now, why] = a;
      if (planted.pods === 'unbound-scheduler' && t.name.startsWith('kube-scheduler-')) return real.newPod(t, undefined, now, why);
      const retag = (tag: string): typeof t => ({ ...t, containers: t.containers.map((c) => ({ ...c, image: `${c.image.slice(0, c.image.lastIndexOf(':'))}:${tag}` })) });
      if (planted.pods === 'etcd-tag' && t.name.startsWith('etcd-')) return real.newPod(retag('3.5.0-0'), node, now, why);
      if (planted.pods === 'apiserver-tag' && t.name.startsWith('kube-apiserver-')) return real.newPod(retag('v1.29.0'), node, now, why);
      return real.newPod(...a);
    },
  };
});

async function run(file: string): Promise<ScenarioResult> {
  const path = join(resolve('scenarios'), file);
  return runScenario(loadScenario(path, readFileSync(path, 'utf8')), embeddedTestbedFactory({}));
}

/** The run failed while the nodes run (not only at rest) on an invariant violation of `rule` whose message matches `why`. */
function violates(r: ScenarioResult, rule: string, why: RegExp): void {
  expect(r.ok, 'the planted bug must fail the scenario').toBe(false);
  const v = r.violations.filter((x) => x.rule === rule);
  expect(v.map((x) => x.message), `a ${rule} violation (got: ${r.violations.map((x) => `${x.rule}: ${x.message}`).join(' | ') || 'none'}; failed step: ${r.steps.find((s) => !s.ok)?.error})`).not.toHaveLength(0);
  expect(v.some((x) => why.test(x.message)), v.map((x) => x.message).join('\n')).toBe(true);
  const failed = r.steps.find((s) => !s.ok)!;
  expect(failed.title).not.toContain('invariants at rest');
}

describe('control plane nodes: role, taints, static pods, Kube-OVN replicas (issue 37)', () => {
  it('BOOT-1: a control plane Node registered without the control-plane NoSchedule taint fails create-cluster', { timeout: TIMEOUT }, async () => {
    planted.kubeadm = 'no-cp-taint';
    try {
      violates(await run('create-cluster.yaml'), 'BOOT-1', /^control plane Node demo-cp-\d \(Machine \S+\) has taints \[none\], expected \[node-role\.kubernetes\.io\/control-plane:NoSchedule\]/);
    } finally {
      planted.kubeadm = undefined;
    }
  });

  it('BOOT-1: a worker registered as a control plane node (role label, taint, static pods) fails create-cluster', { timeout: TIMEOUT }, async () => {
    planted.kubeadm = 'all-cp';
    try {
      violates(await run('create-cluster.yaml'), 'BOOT-1', /^worker Node demo-worker-\d \(Machine \S+ of a MachineSet\) carries what makes a control plane node: label node-role\.kubernetes\.io\/control-plane, .*taint node-role\.kubernetes\.io\/control-plane:NoSchedule/);
    } finally {
      planted.kubeadm = undefined;
    }
  });

  it('KCP-3: a control plane Node Ready without its kube-scheduler static pod fails create-cluster', { timeout: TIMEOUT }, async () => {
    planted.pods = 'unbound-scheduler';
    try {
      violates(await run('create-cluster.yaml'), 'KCP-3', /^control plane Node demo-cp-\d \(Machine \S+\) is Ready without the static pod kube-system\/kube-scheduler-demo-cp-\d/);
    } finally {
      planted.pods = undefined;
    }
  });

  it('KCP-3: an etcd static pod on another image tag than the ClusterConfiguration KCP recorded fails create-cluster', { timeout: TIMEOUT }, async () => {
    planted.pods = 'etcd-tag';
    try {
      violates(await run('create-cluster.yaml'), 'KCP-3', /^etcd-demo-cp-\d runs image registry\.k8s\.io\/etcd:3\.5\.0-0, but the ClusterConfiguration KubeadmControlPlane recorded on Machine \S+ says etcd\.local\.imageTag 3\.5\.15-0$/);
    } finally {
      planted.pods = undefined;
    }
  });

  it('KCP-3: a kube-apiserver static pod on another version than its Machine fails create-cluster', { timeout: TIMEOUT }, async () => {
    planted.pods = 'apiserver-tag';
    try {
      violates(await run('create-cluster.yaml'), 'KCP-3', /^kube-apiserver-demo-cp-\d runs image registry\.k8s\.io\/kube-apiserver:v1\.29\.0, but Machine \S+ asks for Kubernetes v1\.31\.6$/);
    } finally {
      planted.pods = undefined;
    }
  });

  it('OVN-2: ovn-central capped at two replicas while five control plane Nodes run fails control-plane-failure-domains', { timeout: TIMEOUT }, async () => {
    const d = SYSTEM_DEPLOYMENTS.find((x) => x.name === 'ovn-central')! as { replicas: (m: number) => number };
    const real = d.replicas;
    d.replicas = (m) => Math.min(2, m);
    try {
      violates(await run('control-plane-failure-domains.yaml'), 'OVN-2', /^Deployment kube-system\/ovn-central of cpaas-system\/demo asks for 2 replicas with 3 control plane Nodes \(expected min\(3, 3\) = 3: one per Kube-OVN master\)$/);
    } finally {
      d.replicas = real;
    }
  });

  it('KCP-3: a CoreDNS Deployment that follows the number of Nodes instead of kubeadm\'s two replicas fails create-cluster', { timeout: TIMEOUT }, async () => {
    const d = SYSTEM_DEPLOYMENTS.find((x) => x.name === 'coredns')! as { replicas: (m: number) => number };
    const real = d.replicas;
    d.replicas = (m) => Math.max(2, m);
    try {
      violates(await run('create-cluster.yaml'), 'KCP-3', /^Deployment kube-system\/coredns of cpaas-system\/demo asks for 3 replicas, expected kubeadm's 2$/);
    } finally {
      d.replicas = real;
    }
  });
});
