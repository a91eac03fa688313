/**
 * What makes a control plane node one (issue 37), checked at every quiescent
 * instant like the other invariants, from the objects alone and with every
 * expectation derived from something other than the state judged:
 *
 * - which Nodes are control plane nodes comes from the management cluster: a
 *   Node a Machine owned by a KubeadmControlPlane points at (its
 *   status.nodeRef, or the same spec.providerID) — remembered by the Node's
 *   uid for as long as the Node exists — never from the Node's own labels;
 *   a Node of a MachineSet's Machine is a worker;
 * - BOOT-1 (kubeadm's mark-control-plane phase, kubernetes
 *   cmd/kubeadm/app/phases/markcontrolplane): a control plane Node carries the
 *   label `node-role.kubernetes.io/control-plane` and, unless the
 *   KubeadmControlPlane's kubeadmConfigSpec nodeRegistration.taints says
 *   otherwise, exactly the taint `node-role.kubernetes.io/control-plane:NoSchedule`;
 *   a worker carries neither;
 * - KCP-3 (kubeadm's static pods, cmd/kubeadm/app/phases/controlplane and
 *   etcd; the kubelet's mirror pods are named `<component>-<nodeName>`): every
 *   Ready control plane Node runs the mirror pods etcd, kube-apiserver,
 *   kube-controller-manager and kube-scheduler in kube-system, bound to it;
 *   kube-apiserver's image tag is its Machine's spec.version and etcd's the
 *   imageTag of the ClusterConfiguration KCP recorded on the Machine
 *   (annotation controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration);
 *   a worker runs none;
 * - OVN-2 (Kube-OVN's install, dist/images/install.sh: the control plane Nodes
 *   are labelled `kube-ovn/role=master` and ovn-central / kube-ovn-controller
 *   run one replica per master, at most three, never two on one Node): the
 *   replica counts follow the number of control plane Nodes counted here.
 *
 * Rules: BOOT-1, KCP-3, OVN-2 (docs/provider.md "Observable surface").
 */
import type { KubeadmControlPlane, Machine } from '../../product/api/capi.js';
import { nodeReady, type Node } from '../../product/api/core.js';
import { listShared, type KubeClient } from '../../core/kube/client.js';
import type { KubeObject } from '../../core/kube/types.js';
import type { ContractFinding } from './disk-reuse.js';
import type { StateSource } from './world.js';

/** kubeadm's control plane role label and taint key (constants.LabelNodeRoleControlPlane). */
const ROLE_CP = 'node-role.kubernetes.io/control-plane';
/** Kube-OVN's master label (install.sh). */
const OVN_ROLE = 'kube-ovn/role';
/** kubeadm's static pods (constants.ControlPlaneComponents + Etcd). */
const STATIC_PODS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;
/** Kube-OVN's control plane Deployments and their cap (install.sh: replicas = number of masters, at most 3). */
const OVN_DEPLOYMENTS = ['ovn-central', 'kube-ovn-controller'] as const;
const OVN_MAX = 3;
/** kubeadm's CoreDNS Deployment replicas. */
const COREDNS_REPLICAS = 2;
/** Upstream KubeadmClusterConfigurationAnnotation. */
const ANN_CLUSTER_CONFIGURATION = 'controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration';

interface Taint {
  key: string;
  value?: string;
  effect: string;
}

interface PodLike extends KubeObject {
  spec: { nodeName?: string; containers: { name: string; image: string }[] };
}

const tagOf = (image: string | undefined): string => (image && image.includes(':') ? image.slice(image.lastIndexOf(':') + 1) : '');
const vnorm = (v: string | undefined): string => (v ? v.replace(/^v?/, 'v') : '');
const taintText = (t: Taint): string => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`;

/** The taints kubeadm gives a control plane node: nodeRegistration.taints when set (init or join), else the control-plane NoSchedule one. */
function expectedTaints(kcp: Readonly<KubeadmControlPlane> | undefined): Taint[][] {
  const spec = kcp?.spec.kubeadmConfigSpec as { initConfiguration?: { nodeRegistration?: { taints?: Taint[] } }; joinConfiguration?: { nodeRegistration?: { taints?: Taint[] } } } | undefined;
  const def: Taint[] = [{ key: ROLE_CP, effect: 'NoSchedule' }];
  const init = spec?.initConfiguration?.nodeRegistration?.taints;
  const join = spec?.joinConfiguration?.nodeRegistration?.taints;
  return [init ?? def, join ?? def];
}

export class ControlPlaneNodesTracker {
  /** Node uid -> 'cp' | 'worker' (who the Node was registered for, learnt from the Machines). */
  private readonly role = new Map<string, { role: 'cp' | 'worker'; machine: string; cluster: string; kcp?: string }>();

  constructor(private readonly world: StateSource) {}

  async findings(): Promise<ContractFinding[]> {
    const w = this.world;
    const out: ContractFinding[] = [];
    const machines = await listShared<Machine>(w.mgmt, 'Machine');
    const kcps = new Map((await listShared<KubeadmControlPlane>(w.mgmt, 'KubeadmControlPlane')).map((k) => [`${k.metadata.namespace}/${k.metadata.name}`, k]));
    const infraPids = new Map<string, string>();
    for (const hm of await listShared<KubeObject & { spec?: { providerID?: string } }>(w.mgmt, 'HCSMachine')) {
      if (hm.spec?.providerID) infraPids.set(`${hm.metadata.namespace ?? 'default'}/HCSMachine/${hm.metadata.name}`, hm.spec.providerID);
    }
    const byCluster = new Map<string, Readonly<Machine>[]>();
    for (const m of machines) {
      const k = `${m.metadata.namespace ?? 'default'}/${m.spec.clusterName}`;
      byCluster.set(k, [...(byCluster.get(k) ?? []), m]);
    }
    for (const key of w.workloads.names()) {
      const [ns, cluster] = key.split('/') as [string, string];
      const mine = byCluster.get(key) ?? [];
      const wl = w.workloads.client(ns, cluster);
      const nodes = await listShared<Node>(wl, 'Node');
      const nodeByName = new Map(nodes.map((n) => [n.metadata.name, n]));
      const nodeByPid = new Map(nodes.filter((n) => n.spec?.providerID).map((n) => [n.spec!.providerID!, n]));
      const machineOf = new Map<string, Readonly<Machine>>();
      for (const m of mine) {
        const owner = m.metadata.ownerReferences?.find((o) => o.controller);
        // The Node registers with the providerID the infrastructure object holds before Cluster API copies it to the Machine.
        const infraPid = m.spec.infrastructureRef?.name ? infraPids.get(`${ns}/${m.spec.infrastructureRef.kind ?? ''}/${m.spec.infrastructureRef.name}`) : undefined;
        const n =
          (m.status?.nodeRef?.name ? nodeByName.get(m.status.nodeRef.name) : undefined) ??
          (m.spec.providerID ? nodeByPid.get(m.spec.providerID) : undefined) ??
          (infraPid ? nodeByPid.get(infraPid) : undefined);
        if (!n?.metadata.uid) continue;
        const role = owner?.kind === 'KubeadmControlPlane' ? 'cp' : owner?.kind === 'MachineSet' ? 'worker' : undefined;
        if (!role) continue;
        this.role.set(n.metadata.uid, { role, machine: m.metadata.name, cluster: key, ...(role === 'cp' ? { kcp: `${ns}/${owner!.name}` } : {}) });
        machineOf.set(n.metadata.uid, m);
      }
      const pods = await listShared<PodLike>(wl, 'Pod', { namespace: 'kube-system' });
      const podByName = new Map(pods.map((p) => [p.metadata.name, p]));
      let cpNodes = 0;
      for (const n of nodes) {
        const r = n.metadata.uid ? this.role.get(n.metadata.uid) : undefined;
        if (!r) continue;
        const name = n.metadata.name;
        const labels = n.metadata.labels ?? {};
        const taints = (n.spec?.taints ?? []) as Taint[];
        const refs = [name, r.machine];
        const cpTaints = taints.filter((t) => t.key === ROLE_CP);
        const staticHere = STATIC_PODS.filter((c) => podByName.get(`${c}-${name}`)?.spec.nodeName === name);
        if (r.role === 'worker') {
          const wrong = [
            ...(ROLE_CP in labels ? [`label ${ROLE_CP}`] : []),
            ...(labels[OVN_ROLE] === 'master' ? [`label ${OVN_ROLE}=master`] : []),
            ...cpTaints.map((t) => `taint ${taintText(t)}`),
            ...staticHere.map((c) => `static pod ${c}-${name}`),
          ];
          if (wrong.length) out.push({ rule: 'BOOT-1', key: `BOOT-1/worker-as-cp/${name}/${wrong.join(',')}`, message: `worker Node ${name} (Machine ${r.machine} of a MachineSet) carries what makes a control plane node: ${wrong.join(', ')}`, refs });
          continue;
        }
        cpNodes++;
        const kcp = r.kcp ? kcps.get(r.kcp) : undefined;
        if (!(ROLE_CP in labels)) out.push({ rule: 'BOOT-1', key: `BOOT-1/cp-label/${name}`, message: `control plane Node ${name} (Machine ${r.machine} of KubeadmControlPlane ${r.kcp}) lacks the label ${ROLE_CP} (kubeadm mark-control-plane); its labels: ${Object.keys(labels).sort().join(', ') || 'none'}`, refs });
        const have = taints.map(taintText).sort().join(', ');
        const options = expectedTaints(kcp).map((ts) => ts.map(taintText).sort().join(', '));
        // Only the taints kubeadm sets are judged: others (not-ready, unreachable, shutdown) come and go with the Node's state.
        const kubeadmKeys = new Set(expectedTaints(kcp).flat().map((t) => t.key).concat(ROLE_CP));
        const haveKubeadm = taints.filter((t) => kubeadmKeys.has(t.key)).map(taintText).sort().join(', ');
        if (!options.includes(haveKubeadm)) out.push({ rule: 'BOOT-1', key: `BOOT-1/cp-taints/${name}/${haveKubeadm}`, message: `control plane Node ${name} (Machine ${r.machine}) has taints [${have || 'none'}], expected [${options[1] || 'none'}] (KubeadmControlPlane ${r.kcp} nodeRegistration.taints, default ${ROLE_CP}:NoSchedule)`, refs });
        if (labels[OVN_ROLE] !== 'master') out.push({ rule: 'OVN-2', key: `OVN-2/master-label/${name}`, message: `control plane Node ${name} lacks the label ${OVN_ROLE}=master (Kube-OVN runs ovn-central on the control plane nodes)`, refs });
        if (!nodeReady(n)) continue;
        const m = machineOf.get(n.metadata.uid!);
        const missing = STATIC_PODS.filter((c) => !staticHere.includes(c));
        if (missing.length) out.push({ rule: 'KCP-3', key: `KCP-3/static-pods/${name}/${missing.join(',')}`, message: `control plane Node ${name} (Machine ${r.machine}) is Ready without the static pod${missing.length > 1 ? 's' : ''} ${missing.map((c) => `kube-system/${c}-${name}`).join(', ')} (kubeadm's control plane components run on every control plane node)`, refs });
        if (!m) continue;
        const api = podByName.get(`kube-apiserver-${name}`);
        const apiTag = tagOf(api?.spec.containers[0]?.image);
        if (api && m.spec.version && vnorm(apiTag) !== vnorm(m.spec.version)) out.push({ rule: 'KCP-3', key: `KCP-3/apiserver-image/${name}/${apiTag}`, message: `kube-apiserver-${name} runs image ${api.spec.containers[0]?.image}, but Machine ${m.metadata.name} asks for Kubernetes ${m.spec.version}`, refs });
        let etcdWant: string | undefined;
        try {
          etcdWant = (JSON.parse(m.metadata.annotations?.[ANN_CLUSTER_CONFIGURATION] ?? '{}') as { etcd?: { local?: { imageTag?: string } } }).etcd?.local?.imageTag;
        } catch {
          etcdWant = undefined;
        }
        const etcd = podByName.get(`etcd-${name}`);
        const etcdTag = tagOf(etcd?.spec.containers[0]?.image);
        if (etcd && etcdWant && etcdTag !== etcdWant) out.push({ rule: 'KCP-3', key: `KCP-3/etcd-image/${name}/${etcdTag}`, message: `etcd-${name} runs image ${etcd.spec.containers[0]?.image}, but the ClusterConfiguration KubeadmControlPlane recorded on Machine ${m.metadata.name} says etcd.local.imageTag ${etcdWant}`, refs });
      }
      // Forget Nodes that are gone (uids are never reused).
      const uids = new Set(nodes.map((n) => n.metadata.uid));
      for (const [uid, r] of [...this.role]) if (r.cluster === key && !uids.has(uid)) this.role.delete(uid);
      out.push(...(await this.ovnReplicas(wl, key, cpNodes, mine.some((m) => m.metadata.ownerReferences?.some((o) => o.kind === 'KubeadmControlPlane')), pods)));
    }
    return out;
  }

  /** OVN-2: ovn-central and kube-ovn-controller run min(3, control plane Nodes) replicas, never two on one Node, only on control plane Nodes. */
  private async ovnReplicas(wl: KubeClient, key: string, cpNodes: number, hasKcp: boolean, pods: readonly Readonly<PodLike>[]): Promise<ContractFinding[]> {
    if (!hasKcp) return [];
    const out: ContractFinding[] = [];
    const want = Math.min(OVN_MAX, cpNodes);
    const cpNames = new Set<string>();
    for (const n of await listShared<Node>(wl, 'Node')) if (n.metadata.uid && this.role.get(n.metadata.uid)?.role === 'cp') cpNames.add(n.metadata.name);
    const deps = await listShared<KubeObject & { spec?: { replicas?: number } }>(wl, 'Deployment', { namespace: 'kube-system' });
    // KCP-3: kubeadm's CoreDNS addon runs two replicas whatever the number of control plane Nodes (cmd/kubeadm/app/phases/addons/dns: replicas 2).
    const dns = deps.find((x) => x.metadata.name === 'coredns');
    if (dns && (dns.spec?.replicas ?? 1) !== COREDNS_REPLICAS) out.push({ rule: 'KCP-3', key: `KCP-3/coredns-replicas/${key}/${dns.spec?.replicas ?? 1}`, message: `Deployment kube-system/coredns of ${key} asks for ${dns.spec?.replicas ?? 1} replicas, expected kubeadm's ${COREDNS_REPLICAS}`, refs: ['coredns', key] });
    for (const d of OVN_DEPLOYMENTS) {
      const dep = deps.find((x) => x.metadata.name === d);
      if (!dep) continue;
      const replicas = dep.spec?.replicas ?? 1;
      if (replicas !== want) out.push({ rule: 'OVN-2', key: `OVN-2/replicas/${key}/${d}/${replicas}/${want}`, message: `Deployment kube-system/${d} of ${key} asks for ${replicas} replicas with ${cpNodes} control plane Node${cpNodes === 1 ? '' : 's'} (expected min(${OVN_MAX}, ${cpNodes}) = ${want}: one per Kube-OVN master)`, refs: [d, key] });
      const placed = pods.filter((p) => p.spec.nodeName && !p.metadata.deletionTimestamp && p.metadata.labels?.app === d);
      const perNode = new Map<string, number>();
      for (const p of placed) perNode.set(p.spec.nodeName!, (perNode.get(p.spec.nodeName!) ?? 0) + 1);
      const doubled = [...perNode].filter(([, c]) => c > 1).map(([n]) => n).sort();
      const off = [...perNode.keys()].filter((n) => !cpNames.has(n)).sort();
      if (doubled.length || off.length) {
        out.push({
          rule: 'OVN-2',
          key: `OVN-2/placement/${key}/${d}/${doubled.join(',')}/${off.join(',')}`,
          message: `pods of Deployment kube-system/${d} of ${key} ${[...(doubled.length ? [`share Node${doubled.length > 1 ? 's' : ''} ${doubled.join(', ')}`] : []), ...(off.length ? [`run on Node${off.length > 1 ? 's' : ''} ${off.join(', ')}, not control plane Nodes`] : [])].join(' and ')} (one per Kube-OVN master)`,
          refs: [d, ...doubled, ...off],
        });
      }
    }
    return out;
  }
}
