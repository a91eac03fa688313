/**
 * Issue #15 must-show (part): with the real kubectl against a live testbed (the HTTP facade, TLS + token),
 * the management context lists its own (kind-like) Node; the workload kubeconfig is retrieved from the
 * <cluster>-kubeconfig Secret the clusterctl way, and `kubectl --kubeconfig wl.kubeconfig get nodes` shows the
 * workload Nodes; its system pods show in `get pods -A -o wide`; the server reports the control plane's
 * version. Virtual time only moves through the testbed's API (sim.runUntil / advance), every wait bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretValue, type Secret } from '../../src/product/api/core.js';
import { startWorkerCluster, type FacadeBed } from '../facade/fixture.js';
import { haveKubectl, KubectlRunner } from '../facade/kubectl.js';

describe.skipIf(!haveKubectl)('OPS-1: real kubectl: the workload cluster through its <cluster>-kubeconfig Secret', () => {
  let bed: FacadeBed;
  let k: KubectlRunner;

  beforeAll(async () => {
    bed = await startWorkerCluster({ seed: 7 });
    k = new KubectlRunner(bed.facade.kubeconfigPaths.combined);
    // The Secret follows the served endpoint within a reconcile (virtual time, bounded).
    const r = await bed.tb.sim.runUntil(async () => {
      const s = bed.tb.env.mgmt.getSync<Secret>({ kind: 'Secret', namespace: 'cpaas-system', name: 'demo-kubeconfig' });
      return !!s && (secretValue(s, 'value') ?? '').includes(bed.facade.clusterUrl('cpaas-system', 'demo'));
    }, 60_000);
    expect(r.ok).toBe(true);
    await bed.tb.sim.advance(30_000);
  }, 180_000);
  afterAll(async () => bed?.close());

  it('kubectl get nodes on the management context: its own control-plane Node, as kind has', async () => {
    const out = await k.ok('kubectl get nodes');
    expect(out).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION/);
    expect(out).toMatch(/management-control-plane\s+Ready\s+control-plane\s+\S+\s+v1\.33/);
  });

  it('kubectl get secret demo-kubeconfig (type, label) and the clusterctl-style retrieval; get nodes through it', async () => {
    const sec = await k.ok('kubectl get secret demo-kubeconfig -n cpaas-system --show-labels');
    expect(sec).toMatch(/demo-kubeconfig\s+cluster\.x-k8s\.io\/secret\s+1\s+\S+\s+cluster\.x-k8s\.io\/cluster-name=demo/);
    await k.ok('kubectl get secret demo-kubeconfig -n cpaas-system -o jsonpath={.data.value} | base64 -d > wl.kubeconfig');
    const nodes = await k.ok('kubectl --kubeconfig wl.kubeconfig get nodes');
    expect(nodes.trim().split('\n')).toHaveLength(4);
    for (const n of ['demo-worker-1', 'demo-worker-2', 'demo-worker-3']) expect(nodes).toMatch(new RegExp(`${n}\\s+Ready\\s+<none>\\s+\\S+\\s+v1\\.31\\.6`));
    const ctx = await k.ok('kubectl --kubeconfig wl.kubeconfig config current-context');
    expect(ctx.trim()).toBe('demo-admin@demo');
  });

  it('kubectl --kubeconfig wl.kubeconfig get pods -A -o wide: the system pods, Running on their Nodes', async () => {
    const out = await k.ok('kubectl --kubeconfig wl.kubeconfig get pods -A -o wide');
    expect(out.split('\n')[0]).toMatch(/^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/);
    for (const n of ['demo-worker-1', 'demo-worker-2', 'demo-worker-3']) {
      for (const ds of ['kube-proxy', 'kube-ovn-cni', 'ovs-ovn']) expect(out).toMatch(new RegExp(`kube-system\\s+${ds}-\\S{5}\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+192\\.168\\.\\S+\\s+${n}\\s`));
    }
    expect(out.match(/kube-system\s+coredns-\S+\s+1\/1\s+Running/g)).toHaveLength(2);
    const ds = await k.ok('kubectl --kubeconfig wl.kubeconfig get daemonsets -n kube-system -o name');
    expect(ds.trim().split('\n').sort()).toEqual(['daemonset.apps/kube-ovn-cni', 'daemonset.apps/kube-proxy', 'daemonset.apps/ovs-ovn']);
  });

  it('kubectl --kubeconfig wl.kubeconfig version: the server reports the version its nodes run, not the facade\'s', async () => {
    const out = await k.ok('kubectl --kubeconfig wl.kubeconfig version -o json');
    const v = JSON.parse(out) as { serverVersion: { gitVersion: string; minor: string } };
    expect(v.serverVersion.gitVersion).toBe('v1.31.6');
    expect(v.serverVersion.minor).toBe('31');
  });
});
