/**
 * What the AppRelease's HealthChecking phase verifies ("verifying Kube-OVN
 * pods"): the pods chart-cpaas-kube-ovn deploys in kube-system, as kube-ovn's
 * dist/images/install.sh starts and waits for them (`kubectl rollout status`
 * of deployment/ovn-central, daemonset/ovs-ovn, deployment/kube-ovn-controller,
 * daemonset/kube-ovn-cni):
 * - DaemonSets kube-ovn-cni (app=kube-ovn-cni) and ovs-ovn (app=ovs): a Ready
 *   pod on every Ready Node (Nodes that are not Ready are not counted);
 * - Deployments ovn-central (app=ovn-central) and kube-ovn-controller
 *   (app=kube-ovn-controller): as many Ready pods as their replicas (none in
 *   a cluster whose control plane is outside the model: system-pods.ts).
 * A cluster without Nodes has nothing to verify.
 */
import { nodeReady, type Node } from '../../product/api/core.js';
import type { KubeClient } from '../../core/kube/client.js';
import type { KubeObject } from '../../core/kube/types.js';
import { podReady, SYSTEM_NAMESPACE, type Pod } from './pods.js';

export interface KubeOvnHealth {
  ready: boolean;
  /** e.g. "kube-ovn-cni 2/3, ovs-ovn 3/3, ovn-central 1/1, kube-ovn-controller 1/1". */
  summary: string;
  /** "kube-system/<pod> (node <n>)" of the pods that are not Ready, or "<workload>: no pod" */
  notReady: string[];
}

export async function kubeOvnHealth(client: KubeClient): Promise<KubeOvnHealth> {
  const nodes = (await client.list<Node>('Node')).filter((n) => nodeReady(n)).map((n) => n.metadata.name);
  const pods = await client.list<Pod>('Pod', { namespace: SYSTEM_NAMESPACE });
  const parts: string[] = [];
  const notReady: string[] = [];
  for (const [name, app] of [['kube-ovn-cni', 'kube-ovn-cni'], ['ovs-ovn', 'ovs']] as const) {
    const mine = pods.filter((p) => p.metadata.labels?.app === app && p.metadata.ownerReferences?.some((r) => r.kind === 'DaemonSet' && r.name === name));
    let ok = 0;
    for (const n of nodes) {
      const p = mine.find((x) => x.spec.nodeName === n);
      if (p && podReady(p)) ok++;
      else notReady.push(p ? `${SYSTEM_NAMESPACE}/${p.metadata.name} (node ${n})` : `${name}: no pod on node ${n}`);
    }
    parts.push(`${name} ${ok}/${nodes.length}`);
  }
  for (const name of ['ovn-central', 'kube-ovn-controller']) {
    const dep = await client.get<KubeObject & { spec?: { replicas?: number } }>({ kind: 'Deployment', namespace: SYSTEM_NAMESPACE, name });
    const want = dep?.spec?.replicas ?? 0;
    const mine = pods.filter((p) => p.metadata.labels?.app === name);
    const ok = mine.filter((p) => podReady(p)).length;
    for (const p of mine) if (!podReady(p)) notReady.push(`${SYSTEM_NAMESPACE}/${p.metadata.name}${p.spec.nodeName ? ` (node ${p.spec.nodeName})` : ' (Pending)'}`);
    parts.push(`${name} ${ok}/${want}`);
    if (ok < want && !notReady.some((x) => x.includes(name))) notReady.push(`${name}: ${ok}/${want} Ready`);
  }
  return { ready: notReady.length === 0, summary: parts.join(', '), notReady };
}
