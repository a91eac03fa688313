/**
 * The system pods of every simulated workload cluster (docs/workload.md):
 *
 * - per Node: the DaemonSet pods kube-proxy (kubeadm's addon), kube-ovn-cni
 *   and ovs-ovn (Kube-OVN, dist/images/install.sh in kubeovn/kube-ovn: the
 *   `kube-ovn-cni` and `ovs-ovn` DaemonSets, label app=kube-ovn-cni / app=ovs);
 *   on control-plane Nodes the kubeadm static pods etcd, kube-apiserver,
 *   kube-controller-manager and kube-scheduler as mirror pods;
 * - per cluster: Deployments coredns (2 replicas, k8s-app=kube-dns),
 *   ovn-central and kube-ovn-controller (Kube-OVN; replicas = the number of
 *   `kube-ovn/role=master` Nodes, at most 3), each through a ReplicaSet,
 *   placed by a tiny scheduler: Ready, schedulable Nodes whose taints the pod
 *   tolerates and that match its nodeSelector, fewest pods of the same
 *   ReplicaSet first, then by name. Kube-OVN's install labels the
 *   control-plane Nodes `kube-ovn/role=master`; a cluster without
 *   control-plane Nodes (a Cluster without controlPlaneRef: its control plane
 *   is outside the model) has no ovn-central / kube-ovn-controller pods in
 *   the model (they run on that outside control plane).
 *
 * Pods are Ready when their Node is Ready (and not annotated
 * `testbed.hcs/pod-not-ready`). A Node that goes away takes its pods with it
 * (the mirror pods by ownerReference, the others as the pod garbage
 * collector does for pods bound to a missing node); a ReplicaSet short of
 * pods (after a drain evicted them) creates new ones, which are scheduled on
 * the other Nodes. Work keys: `<cluster>|node/<name>` and `<cluster>|cluster`.
 * The controller reads from watch-fed caches, so a node's reconcile costs a
 * handful of map lookups (the N=1000 scale bench keeps its figures).
 */
import { nodeReady, type Node } from '../../product/api/core.js';
import { errorMessage } from '../../core/errors.js';
import { isConflict, isNotFound } from '../../core/kube/errors.js';
import type { KubeClient } from '../../core/kube/client.js';
import type { KubeObject, OwnerReference, WatchEvent } from '../../core/kube/types.js';
import type { ControllerContext, Logger } from '../../core/runtime/context.js';
import type { Controller, Result } from '../../core/runtime/manager.js';
import type { Rng } from '../../core/rng.js';
import type { AppRelease } from '../../product/api/apprelease.js';
import type { OsSupportMatrix } from '../../product/matrix/matrix.js';
import {
  ANN_CONFIG_HASH,
  ANN_CONFIG_MIRROR,
  ANN_CONFIG_SOURCE,
  LABEL_ROLE_CONTROL_PLANE,
  newPod,
  nodeInternalIP,
  podReady,
  podStatus,
  shortHash,
  statusOutdated,
  SYSTEM_NAMESPACE,
  untoleratedTaints,
  type Pod,
  type PodTemplate,
} from './pods.js';

export const SYSTEM_PODS_CONTROLLER = 'workload-system';
/** Kube-OVN's label for the Nodes that run ovn-central (install.sh: `kubectl label node -l node-role.kubernetes.io/control-plane kube-ovn/role=master`). */
export const LABEL_KUBE_OVN_ROLE = 'kube-ovn/role';
/** The KCP controller's record of what the control plane runs (src/world/capi/kcp.ts CONTROL_PLANE_CONFIGMAP). */
const CONTROL_PLANE_RECORD = { namespace: 'kube-system', name: 'testbed-control-plane' };

export const STATIC_COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;

interface Versions {
  kubernetes: string;
  etcd: string;
  coredns: string;
  kubeOvn: string;
}

interface DaemonSetDef {
  name: string;
  selector: Record<string, string>;
  extraLabels?: Record<string, string>;
  containers: (v: Versions) => { name: string; image: string }[];
  priorityClassName: string;
}

interface DeploymentDef {
  name: string;
  selector: Record<string, string>;
  extraLabels?: Record<string, string>;
  containers: (v: Versions) => { name: string; image: string }[];
  replicas: (masters: number) => number;
  nodeSelector?: Record<string, string>;
  antiAffinity: boolean;
  tolerations: Pod['spec']['tolerations'];
  priorityClassName: string;
}

const KUBE_OVN_IMAGE = (v: Versions): string => `docker.io/kubeovn/kube-ovn:${v.kubeOvn}`;

export const SYSTEM_DAEMONSETS: readonly DaemonSetDef[] = [
  { name: 'kube-proxy', selector: { 'k8s-app': 'kube-proxy' }, containers: (v) => [{ name: 'kube-proxy', image: `registry.k8s.io/kube-proxy:${v.kubernetes}` }], priorityClassName: 'system-node-critical' },
  { name: 'kube-ovn-cni', selector: { app: 'kube-ovn-cni' }, extraLabels: { component: 'network', type: 'infra' }, containers: (v) => [{ name: 'cni-server', image: KUBE_OVN_IMAGE(v) }], priorityClassName: 'system-node-critical' },
  { name: 'ovs-ovn', selector: { app: 'ovs' }, extraLabels: { component: 'network', type: 'infra' }, containers: (v) => [{ name: 'openvswitch', image: KUBE_OVN_IMAGE(v) }], priorityClassName: 'system-node-critical' },
];

const masterSel = { [LABEL_KUBE_OVN_ROLE]: 'master' };
const tolerateAll = [{ operator: 'Exists', effect: 'NoSchedule' }];
export const SYSTEM_DEPLOYMENTS: readonly DeploymentDef[] = [
  {
    name: 'coredns',
    selector: { 'k8s-app': 'kube-dns' },
    containers: (v) => [{ name: 'coredns', image: `registry.k8s.io/coredns/coredns:${v.coredns}` }],
    replicas: () => 2,
    antiAffinity: false,
    // kubeadm's CoreDNS manifest tolerates the control-plane taint and CriticalAddonsOnly.
    tolerations: [{ key: 'CriticalAddonsOnly', operator: 'Exists' }, { key: LABEL_ROLE_CONTROL_PLANE, effect: 'NoSchedule' }],
    priorityClassName: 'system-cluster-critical',
  },
  {
    name: 'ovn-central',
    selector: { app: 'ovn-central' },
    extraLabels: { component: 'network', type: 'infra' },
    containers: (v) => [{ name: 'ovn-central', image: KUBE_OVN_IMAGE(v) }],
    replicas: (m) => Math.min(3, m),
    nodeSelector: masterSel,
    antiAffinity: true,
    tolerations: tolerateAll,
    priorityClassName: 'system-cluster-critical',
  },
  {
    name: 'kube-ovn-controller',
    selector: { app: 'kube-ovn-controller' },
    extraLabels: { component: 'network', type: 'infra' },
    containers: (v) => [{ name: 'kube-ovn-controller', image: KUBE_OVN_IMAGE(v) }],
    replicas: (m) => Math.min(3, m),
    nodeSelector: masterSel,
    antiAffinity: true,
    tolerations: tolerateAll,
    priorityClassName: 'system-cluster-critical',
  },
];

/** Name of a DaemonSet's pod on a node (the DaemonSet controller's generateName `<ds>-` plus 5 characters; here fixed by the node). */
export function daemonSetPodName(ds: string, node: string): string {
  return `${ds}-${shortHash(`${ds}/${node}`, 5)}`;
}

/** kubelet's mirror pod name for a kubeadm static pod. */
export function mirrorPodName(component: string, node: string): string {
  return `${component}-${node}`;
}

function replicaSetName(d: DeploymentDef): string {
  return `${d.name}-${shortHash(`${d.name}/template`, 10)}`;
}


/** Watch-fed view of one workload cluster. */
interface ClusterCache {
  key: string;
  client: KubeClient;
  nodes: Map<string, Readonly<Node>>;
  /** "ns/name" -> pod. */
  pods: Map<string, Readonly<Pod>>;
  /** node -> "ns/name" of the pods bound to it. */
  byNode: Map<string, Set<string>>;
  /** ReplicaSet name -> pod names (kube-system). */
  byReplicaSet: Map<string, Set<string>>;
  /** Node names with label kube-ovn/role=master. */
  masters: Set<string>;
  pending: number;
  readyOf: Map<string, boolean>;
  /** DaemonSet name -> its pods / its Ready pods (names). */
  dsPods: Map<string, Set<string>>;
  dsReady: Map<string, Set<string>>;
  /** DaemonSet owner references, once the DaemonSets exist. */
  dsRefs: Map<string, OwnerReference>;
}

export interface SystemPodsOptions {
  matrix: OsSupportMatrix;
}

export class SystemPodsController implements Controller {
  readonly name = SYSTEM_PODS_CONTROLLER;
  private readonly caches = new Map<string, ClusterCache>();
  private readonly log: Logger;
  private readonly rng: Rng;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly opts: SystemPodsOptions,
  ) {
    this.log = ctx.logs.logger('kube-controller-manager', SYSTEM_PODS_CONTROLLER);
    this.rng = ctx.rng.fork(SYSTEM_PODS_CONTROLLER);
  }

  /** Pods bound to a node, from the cache ("ns/name"). */
  podsOnNode(clusterKey: string, node: string): Readonly<Pod>[] {
    const c = this.caches.get(clusterKey);
    if (!c) return [];
    return [...(c.byNode.get(node) ?? [])].sort().map((k) => c.pods.get(k)!).filter(Boolean);
  }

  watchCluster(clusterKey: string): void {
    if (this.caches.has(clusterKey)) return;
    const [ns, name] = clusterKey.split('/') as [string, string];
    const client = this.ctx.workloads.client(ns, name);
    const c: ClusterCache = { key: clusterKey, client, nodes: new Map(), pods: new Map(), byNode: new Map(), byReplicaSet: new Map(), masters: new Set(), pending: 0, readyOf: new Map(), dsPods: new Map(), dsReady: new Map(), dsRefs: new Map() };
    this.caches.set(clusterKey, c);
    const enqueue = (k: string): void => this.ctx.manager.enqueue(SYSTEM_PODS_CONTROLLER, `${clusterKey}|${k}`);
    const onNode = (e: WatchEvent<Node>): void => {
      const n = e.object;
      const nm = n.metadata.name;
      const wasMaster = c.masters.has(nm);
      const wasReady = c.readyOf.get(nm);
      if (e.type === 'DELETED') {
        c.nodes.delete(nm);
        c.masters.delete(nm);
        c.readyOf.delete(nm);
      } else {
        c.nodes.set(nm, n);
        if (n.metadata.labels?.[LABEL_KUBE_OVN_ROLE] === 'master') c.masters.add(nm);
        else c.masters.delete(nm);
        c.readyOf.set(nm, nodeReady(n) && !n.spec?.unschedulable);
      }
      enqueue(`node/${nm}`);
      const isReady = c.readyOf.get(nm);
      // The cluster-level placement only cares about masters, and about schedulable Nodes while pods wait for one.
      if (wasMaster !== c.masters.has(nm) || (c.pending > 0 && isReady && !wasReady) || ((c.byNode.get(nm)?.size ?? 0) > 0 && e.type === 'DELETED')) enqueue('cluster');
    };
    const onPod = (e: WatchEvent<Pod>): void => {
      const p = e.object;
      const k = `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`;
      const prev = c.pods.get(k);
      if (prev) {
        if (prev.spec.nodeName) c.byNode.get(prev.spec.nodeName)?.delete(k);
        else c.pending--;
      }
      const owner = p.metadata.namespace === SYSTEM_NAMESPACE ? p.metadata.ownerReferences?.find((r) => r.controller) : undefined;
      const rs = owner?.kind === 'ReplicaSet' ? owner.name : undefined;
      if (owner?.kind === 'DaemonSet') {
        const set = (m: Map<string, Set<string>>): Set<string> => {
          let x = m.get(owner.name);
          if (!x) m.set(owner.name, (x = new Set()));
          return x;
        };
        if (e.type === 'DELETED') set(c.dsPods).delete(p.metadata.name);
        else set(c.dsPods).add(p.metadata.name);
        if (e.type !== 'DELETED' && podReady(p)) set(c.dsReady).add(p.metadata.name);
        else set(c.dsReady).delete(p.metadata.name);
      }
      if (e.type === 'DELETED') {
        c.pods.delete(k);
        if (rs) {
          c.byReplicaSet.get(rs)?.delete(p.metadata.name);
          enqueue('cluster');
        }
        return;
      }
      c.pods.set(k, p);
      // A pod whose status no longer fits its Node (a new pod from kubectl, the fault annotation set or removed): its kubelet reports.
      if (p.spec.nodeName && !p.metadata.deletionTimestamp && statusOutdated(p, c.nodes.get(p.spec.nodeName))) enqueue(`node/${p.spec.nodeName}`);
      if (p.spec.nodeName) {
        let s = c.byNode.get(p.spec.nodeName);
        if (!s) c.byNode.set(p.spec.nodeName, (s = new Set()));
        s.add(k);
      } else c.pending++;
      if (rs) {
        let s = c.byReplicaSet.get(rs);
        if (!s) c.byReplicaSet.set(rs, (s = new Set()));
        s.add(p.metadata.name);
      }
    };
    client.watch<Node>('Node', onNode, { shared: true });
    client.watch<Pod>('Pod', onPod, { shared: true });
    void Promise.all([client.list<Node>('Node'), client.list<Pod>('Pod')]).then(([nodes, pods]) => {
      for (const p of pods) if (!c.pods.has(`${p.metadata.namespace ?? 'default'}/${p.metadata.name}`)) onPod({ type: 'ADDED', object: p });
      for (const n of nodes) if (!c.nodes.has(n.metadata.name)) onNode({ type: 'ADDED', object: n });
      enqueue('cluster');
    });
  }

  async reconcile(key: string): Promise<Result | void> {
    const bar = key.lastIndexOf('|');
    const c = this.caches.get(key.slice(0, bar));
    if (!c) return;
    const what = key.slice(bar + 1);
    try {
      if (what === 'cluster') return await this.reconcileCluster(c);
      if (what === 'status') return await this.writeDaemonSetStatus(c);
      if (what.startsWith('node/')) return await this.reconcileNode(c, what.slice(5));
    } catch (e) {
      if (isConflict(e) || isNotFound(e)) return { requeueAfter: 1_000 };
      throw new Error(`workload-system ${key}: ${errorMessage(e)}`);
    }
  }

  // ---- versions -----------------------------------------------------------------

  private versions(c: ClusterCache, node: Readonly<Node> | undefined, controlPlane = false): Versions {
    const kubernetes = node?.status?.nodeInfo?.kubeletVersion && node.status.nodeInfo.kubeletVersion !== 'unknown' ? node.status.nodeInfo.kubeletVersion : '';
    const rec = c.client.getSharedSync?.<KubeObject & { data?: Record<string, string> }>({ kind: 'ConfigMap', ...CONTROL_PLANE_RECORD });
    let etcd = '';
    if (controlPlane) try {
      const members = JSON.parse(rec?.data?.etcdMembers ?? '[]') as { node: string; imageTag: string }[];
      etcd = members.find((m) => m.node === node?.metadata.name)?.imageTag ?? '';
    } catch {
      etcd = '';
    }
    const row = this.opts.matrix.byKubernetesVersion(kubernetes || rec?.data?.kubernetesVersion);
    const ar = c.client.getSharedSync?.<AppRelease>({ kind: 'AppRelease', namespace: 'cpaas-system', name: 'cni-kube-ovn' });
    const ovn = Object.values(ar?.status?.charts ?? {})[0]?.installedRevision;
    return {
      kubernetes: kubernetes || rec?.data?.kubernetesVersion || row?.kubernetesVersion || 'v0.0.0',
      etcd: etcd || row?.etcd || '3.5.15-0',
      coredns: rec?.data?.dnsImageTag || row?.coredns || 'v1.11.3',
      kubeOvn: ovn ?? row?.kubeOvn ?? 'unknown',
    };
  }

  // ---- objects ----------------------------------------------------------------------

  private async ensureOwner(c: ClusterCache, kind: 'DaemonSet' | 'Deployment', name: string, selector: Record<string, string>, labels: Record<string, string>, extra: Record<string, unknown> = {}): Promise<Readonly<KubeObject>> {
    const ref = { kind, namespace: SYSTEM_NAMESPACE, name };
    const cur = c.client.getSharedSync ? c.client.getSharedSync<KubeObject>(ref) : await c.client.get<KubeObject>(ref);
    if (cur) return cur;
    return c.client.create<KubeObject>({
      apiVersion: 'apps/v1',
      kind,
      metadata: { name, namespace: SYSTEM_NAMESPACE, labels: { ...selector }, ...(kind === 'Deployment' ? { annotations: { 'deployment.kubernetes.io/revision': '1' } } : {}) },
      spec: { selector: { matchLabels: { ...selector } }, template: { metadata: { labels: { ...labels } }, spec: {} }, ...extra },
      status: {},
    } as KubeObject);
  }

  private async daemonSet(c: ClusterCache, d: DaemonSetDef): Promise<OwnerReference> {
    const known = c.dsRefs.get(d.name);
    if (known && c.client.getSharedSync?.({ kind: 'DaemonSet', namespace: SYSTEM_NAMESPACE, name: d.name })?.metadata.uid === known.uid) return known;
    const o = await this.ensureOwner(c, 'DaemonSet', d.name, d.selector, { ...d.selector, ...(d.extraLabels ?? {}) }, { updateStrategy: { type: 'RollingUpdate' } });
    const ref = { apiVersion: 'apps/v1', kind: 'DaemonSet', name: d.name, uid: o.metadata.uid!, controller: true, blockOwnerDeletion: true };
    c.dsRefs.set(d.name, ref);
    return ref;
  }

  private async replicaSet(c: ClusterCache, d: DeploymentDef, replicas: number): Promise<{ ref: OwnerReference; rs: Readonly<KubeObject>; dep: Readonly<KubeObject> }> {
    const labels = { ...d.selector, ...(d.extraLabels ?? {}) };
    const dep = await this.ensureOwner(c, 'Deployment', d.name, d.selector, labels, { replicas, strategy: { type: 'RollingUpdate' } });
    const name = replicaSetName(d);
    const hash = name.slice(d.name.length + 1);
    let rs = await c.client.get<KubeObject>({ kind: 'ReplicaSet', namespace: SYSTEM_NAMESPACE, name });
    rs ??= await c.client.create<KubeObject>({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name, namespace: SYSTEM_NAMESPACE, labels: { ...d.selector, 'pod-template-hash': hash }, annotations: { 'deployment.kubernetes.io/revision': '1' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: d.name, uid: dep.metadata.uid!, controller: true, blockOwnerDeletion: true }] },
      spec: { replicas, selector: { matchLabels: { ...d.selector, 'pod-template-hash': hash } }, template: { metadata: { labels: { ...labels, 'pod-template-hash': hash } }, spec: {} } },
      status: {},
    } as KubeObject);
    return { ref: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name, uid: rs.metadata.uid!, controller: true, blockOwnerDeletion: true }, rs, dep };
  }

  // ---- per node -------------------------------------------------------------------

  private async reconcileNode(c: ClusterCache, nodeName: string): Promise<Result | void> {
    const node = c.nodes.get(nodeName);
    const now = this.ctx.clock.now();
    if (!node) {
      // Pod GC: pods bound to a Node that no longer exists are deleted (mirror pods go with their owner, the Node).
      for (const k of [...(c.byNode.get(nodeName) ?? [])].sort()) {
        const [ns, name] = k.split('/') as [string, string];
        await c.client.delete({ kind: 'Pod', namespace: ns, name }, { ignoreNotFound: true });
      }
      this.statusSoon(c);
      return;
    }
    const cp = !!node.metadata.labels && LABEL_ROLE_CONTROL_PLANE in node.metadata.labels;
    const v = this.versions(c, node, cp);
    if (cp && node.metadata.labels?.[LABEL_KUBE_OVN_ROLE] !== 'master') {
      const fresh = await c.client.get<Node>({ kind: 'Node', name: nodeName });
      if (fresh) await c.client.update<Node>({ ...fresh, metadata: { ...fresh.metadata, labels: { ...(fresh.metadata.labels ?? {}), [LABEL_KUBE_OVN_ROLE]: 'master' } } });
    }
    const templates: PodTemplate[] = [];
    for (const d of SYSTEM_DAEMONSETS) {
      templates.push({
        name: daemonSetPodName(d.name, nodeName),
        labels: { ...d.selector, ...(d.extraLabels ?? {}), 'controller-revision-hash': shortHash(`${d.name}/rev`, 10), 'pod-template-generation': '1' },
        owner: await this.daemonSet(c, d),
        containers: d.containers(v),
        hostNetwork: true,
        priorityClassName: d.priorityClassName,
        tolerations: [{ operator: 'Exists' }],
      });
    }
    if (cp) {
      const ip = nodeInternalIP(node) ?? '';
      for (const comp of STATIC_COMPONENTS) {
        const image = comp === 'etcd' ? `registry.k8s.io/etcd:${v.etcd}` : `registry.k8s.io/${comp}:${v.kubernetes}`;
        const hash = shortHash(`${comp}/${nodeName}/${image}`, 32).toLowerCase();
        templates.push({
          name: mirrorPodName(comp, nodeName),
          labels: { component: comp, tier: 'control-plane' },
          annotations: {
            [ANN_CONFIG_HASH]: hash,
            [ANN_CONFIG_MIRROR]: hash,
            [ANN_CONFIG_SOURCE]: 'file',
            ...(comp === 'kube-apiserver' && ip ? { 'kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint': `${ip}:6443` } : {}),
            ...(comp === 'etcd' && ip ? { 'kubeadm.kubernetes.io/etcd.advertise-client-urls': `https://${ip}:2379` } : {}),
          },
          owner: { apiVersion: 'v1', kind: 'Node', name: nodeName, uid: node.metadata.uid!, controller: true },
          containers: [{ name: comp, image }],
          hostNetwork: true,
          priorityClassName: 'system-node-critical',
          tolerations: [{ operator: 'Exists', effect: 'NoExecute' }],
        });
      }
    }
    let wrote = false;
    for (const t of templates) {
      const cur = c.pods.get(`${SYSTEM_NAMESPACE}/${t.name}`);
      if (!cur) {
        await c.client.create<Pod>(newPod(t, node, now));
        wrote = true;
        continue;
      }
      if (cur.metadata.deletionTimestamp) continue;
      if (statusOutdated(cur, node)) {
        await this.writeStatus(c, cur, node, now);
        wrote = true;
      }
    }
    if (wrote) this.statusSoon(c);
    // The other pods on this node (ReplicaSet pods, anything created through kubectl) follow its readiness too.
    for (const k of [...(c.byNode.get(nodeName) ?? [])]) {
      const p = c.pods.get(k);
      if (p && !p.metadata.deletionTimestamp && statusOutdated(p, node) && (p.metadata.namespace !== SYSTEM_NAMESPACE || !templates.some((t) => t.name === p.metadata.name))) await this.writeStatus(c, p, node, now);
    }
    // ReplicaSet pods' readiness feeds the Deployments' status.
    if ((c.byNode.get(nodeName)?.size ?? 0) > templates.length) this.ctx.manager.enqueue(SYSTEM_PODS_CONTROLLER, `${c.key}|cluster`);
  }

  /** DaemonSet status is written 1 s after pod changes (one write for a burst of Node events). */
  private statusSoon(c: ClusterCache): void {
    this.ctx.manager.enqueueAfter(SYSTEM_PODS_CONTROLLER, `${c.key}|status`, 1_000);
  }

  private async writeStatus(c: ClusterCache, p: Readonly<Pod>, node: Readonly<Node> | undefined, now: number, unschedulable?: string): Promise<void> {
    await c.client.updateStatus<Pod>({ ...(p as Pod), status: podStatus(p, node, now, p.status, unschedulable) });
  }

  // ---- per cluster: ReplicaSets + scheduler ------------------------------------------

  private async reconcileCluster(c: ClusterCache): Promise<Result | void> {
    const now = this.ctx.clock.now();
    const masters = [...c.masters].filter((n) => c.nodes.has(n)).length;
    for (const d of SYSTEM_DEPLOYMENTS) {
      const replicas = d.replicas(masters);
      const { ref, rs, dep } = await this.replicaSet(c, d, replicas);
      const names = [...(c.byReplicaSet.get(ref.name) ?? [])].sort();
      const pods = names.map((n) => c.pods.get(`${SYSTEM_NAMESPACE}/${n}`)).filter((p): p is Readonly<Pod> => !!p && !p.metadata.deletionTimestamp);
      // Scale down: Pending pods first, then the newest.
      const extra = pods.length - replicas;
      if (extra > 0) {
        const order = [...pods].sort((a, b) => (a.spec.nodeName ? 1 : 0) - (b.spec.nodeName ? 1 : 0) || (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') || (a.metadata.name < b.metadata.name ? -1 : 1));
        for (const p of order.slice(0, extra)) await c.client.delete({ kind: 'Pod', namespace: SYSTEM_NAMESPACE, name: p.metadata.name }, { ignoreNotFound: true });
      }
      const live = extra > 0 ? pods.filter((p) => names.includes(p.metadata.name) && c.pods.has(`${SYSTEM_NAMESPACE}/${p.metadata.name}`)) : pods;
      const counts = new Map<string, number>();
      for (const p of live) if (p.spec.nodeName) counts.set(p.spec.nodeName, (counts.get(p.spec.nodeName) ?? 0) + 1);
      const labels = { ...d.selector, ...(d.extraLabels ?? {}), 'pod-template-hash': ref.name.slice(d.name.length + 1) };
      const template = (name: string): PodTemplate => ({
        name,
        labels,
        owner: ref,
        containers: d.containers(this.versions(c, undefined)),
        hostNetwork: d.name !== 'coredns',
        priorityClassName: d.priorityClassName,
        tolerations: d.tolerations,
        ...(d.nodeSelector ? { nodeSelector: d.nodeSelector } : {}),
      });
      // Bind Pending pods, then create the missing ones.
      for (const p of live.filter((x) => !x.spec.nodeName)) {
        const pick = this.schedule(c, d, counts);
        if (!pick.node) {
          if (p.status?.conditions?.[0]?.message !== pick.reason) await this.writeStatus(c, p, undefined, now, pick.reason);
          continue;
        }
        counts.set(pick.node.metadata.name, (counts.get(pick.node.metadata.name) ?? 0) + 1);
        const bound = await c.client.update<Pod>({ ...(p as Pod), spec: { ...p.spec, nodeName: pick.node.metadata.name } });
        await this.writeStatus(c, bound, pick.node, now);
      }
      for (let i = live.length; i < replicas; i++) {
        const pick = this.schedule(c, d, counts);
        if (pick.node) counts.set(pick.node.metadata.name, (counts.get(pick.node.metadata.name) ?? 0) + 1);
        const pod = await c.client.create<Pod>(newPod(template(`${ref.name}-${this.rng.string(5)}`), pick.node, now, pick.reason));
        this.log.info(pick.node ? `ReplicaSet ${SYSTEM_NAMESPACE}/${ref.name}: created pod ${pod.metadata.name} on Node ${pick.node.metadata.name}` : `ReplicaSet ${SYSTEM_NAMESPACE}/${ref.name}: created pod ${pod.metadata.name}, Pending: ${pick.reason}`, { cluster: c.key, pod: pod.metadata.name, ...(pick.node ? { node: pick.node.metadata.name } : {}) });
      }
      await this.writeOwnerStatus(c, rs, dep, ref.name, replicas);
    }
    await this.writeDaemonSetStatus(c);
  }

  /** The tiny scheduler: a Node for one more pod of `d`, or why there is none (the scheduler's FailedScheduling message). */
  private schedule(c: ClusterCache, d: DeploymentDef, counts: Map<string, number>): { node?: Readonly<Node>; reason?: string } {
    const all = [...c.nodes.values()].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
    const reasons = new Map<string, number>();
    const no = (r: string): void => void reasons.set(r, (reasons.get(r) ?? 0) + 1);
    const useSelector = !!d.nodeSelector;
    const fit: Readonly<Node>[] = [];
    for (const n of all) {
      if (!nodeReady(n)) no("node(s) had untolerated taint {node.kubernetes.io/not-ready: }");
      else if (n.spec?.unschedulable) no('node(s) were unschedulable');
      else if (untoleratedTaints(n as Node, d.tolerations).length) no(`node(s) had untolerated taint {${untoleratedTaints(n as Node, d.tolerations)[0]}}`);
      else if (useSelector && !Object.entries(d.nodeSelector!).every(([k, v]) => n.metadata.labels?.[k] === v)) no("node(s) didn't match Pod's node affinity/selector");
      else if (d.antiAffinity && (counts.get(n.metadata.name) ?? 0) > 0) no("node(s) didn't match pod anti-affinity rules");
      else fit.push(n);
    }
    if (fit.length === 0) {
      const why = [...reasons].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([r, k]) => `${k} ${r}`).join(', ');
      return { reason: `0/${all.length} nodes are available${why ? `: ${why}` : ''}. preemption: 0/${all.length} nodes are available` };
    }
    fit.sort((a, b) => (counts.get(a.metadata.name) ?? 0) - (counts.get(b.metadata.name) ?? 0) || (a.metadata.name < b.metadata.name ? -1 : 1));
    return { node: fit[0]! };
  }

  private async writeOwnerStatus(c: ClusterCache, rs: Readonly<KubeObject>, dep: Readonly<KubeObject>, rsName: string, replicas: number): Promise<void> {
    const pods = [...(c.byReplicaSet.get(rsName) ?? [])].map((n) => c.pods.get(`${SYSTEM_NAMESPACE}/${n}`)).filter((p): p is Readonly<Pod> => !!p);
    const ready = pods.filter((p) => podReady(p as Pod)).length;
    const rsStatus = { replicas: pods.length, fullyLabeledReplicas: pods.length, readyReplicas: ready, availableReplicas: ready, observedGeneration: rs.metadata.generation ?? 1 };
    const depStatus = {
      observedGeneration: dep.metadata.generation ?? 1,
      replicas: pods.length,
      updatedReplicas: pods.length,
      readyReplicas: ready,
      availableReplicas: ready,
      ...(pods.length - ready > 0 ? { unavailableReplicas: pods.length - ready } : {}),
      conditions: [{ type: 'Available', status: ready >= Math.min(1, replicas) ? 'True' : 'False', reason: ready >= Math.min(1, replicas) ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable', message: ready >= Math.min(1, replicas) ? 'Deployment has minimum availability.' : 'Deployment does not have minimum availability.' }],
    };
    const spec = (o: Readonly<KubeObject>): { replicas?: number } => ((o as { spec?: { replicas?: number } }).spec ?? {});
    for (const [o, st] of [[rs, rsStatus], [dep, depStatus]] as const) {
      let cur = (await c.client.get<KubeObject & { spec?: { replicas?: number }; status?: unknown }>({ kind: o.kind, namespace: SYSTEM_NAMESPACE, name: o.metadata.name }))!;
      if (!cur) continue;
      if (spec(cur).replicas !== replicas) cur = await c.client.update({ ...cur, spec: { ...cur.spec, replicas } });
      if (JSON.stringify(cur.status ?? {}) !== JSON.stringify(st)) await c.client.updateStatus({ ...cur, status: st });
    }
  }

  private async writeDaemonSetStatus(c: ClusterCache): Promise<void> {
    if (c.nodes.size === 0 && !c.client.getSharedSync?.({ kind: 'DaemonSet', namespace: SYSTEM_NAMESPACE, name: SYSTEM_DAEMONSETS[0]!.name })) return;
    for (const d of SYSTEM_DAEMONSETS) {
      const cur = await c.client.get<KubeObject & { status?: unknown }>({ kind: 'DaemonSet', namespace: SYSTEM_NAMESPACE, name: d.name });
      if (!cur) continue;
      const scheduled = c.dsPods.get(d.name)?.size ?? 0;
      const ready = c.dsReady.get(d.name)?.size ?? 0;
      const st = { currentNumberScheduled: scheduled, desiredNumberScheduled: c.nodes.size, numberAvailable: ready, numberMisscheduled: 0, numberReady: ready, observedGeneration: cur.metadata.generation ?? 1, updatedNumberScheduled: scheduled, ...(c.nodes.size - ready > 0 ? { numberUnavailable: c.nodes.size - ready } : {}) };
      if (JSON.stringify(cur.status ?? {}) !== JSON.stringify(st)) await c.client.updateStatus({ ...cur, status: st });
    }
  }
}

/** Register the controller; watches every workload cluster known now and every new one. */
export function setupSystemPodsController(ctx: ControllerContext, opts: SystemPodsOptions): SystemPodsController {
  const c = new SystemPodsController(ctx, opts);
  ctx.manager.register(c);
  for (const k of ctx.workloads.names()) c.watchCluster(k);
  const w = ctx.workloads as { onCreate?: (l: (key: string, store: unknown) => void) => void };
  w.onCreate?.((key) => c.watchCluster(key));
  return c;
}

/**
 * The Kubernetes version a workload cluster's API server reports on /version:
 * the lowest version among the Ready kube-apiserver mirror pods (what a
 * client behind the control plane endpoint may hit during a rolling
 * upgrade; KCP's status.version is the lowest Machine version too), else the
 * kubeadm-config ClusterConfiguration's kubernetesVersion, else the highest
 * kubelet version (a worker-only cluster, its control plane outside the
 * model); undefined when the cluster has none of these.
 */
export function workloadKubernetesVersion(store: KubeClient): string | undefined {
  const list = <T extends KubeObject>(kind: string, opts: { namespace?: string; labelSelector?: string } = {}): readonly Readonly<T>[] => store.listSharedSync?.<T>(kind, opts) ?? [];
  const cmp = (a: string, b: string): number => {
    const pa = a.replace(/^v/, '').split(/[.+-]/).map(Number);
    const pb = b.replace(/^v/, '').split(/[.+-]/).map(Number);
    for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
    return 0;
  };
  const apiservers = list<Pod>('Pod', { namespace: SYSTEM_NAMESPACE, labelSelector: 'component=kube-apiserver' })
    .filter((p) => podReady(p as Pod))
    .map((p) => /:(v\d+\.\d+\.\d+)/.exec(p.spec.containers[0]?.image ?? '')?.[1])
    .filter((v): v is string => !!v)
    .sort(cmp);
  if (apiservers.length) return apiservers[0];
  const kc = store.getSharedSync?.<KubeObject & { data?: Record<string, string> }>({ kind: 'ConfigMap', namespace: SYSTEM_NAMESPACE, name: 'kubeadm-config' });
  const fromConfig = /kubernetesVersion:\s*(v\d+\.\d+\.\d+)/.exec(kc?.data?.ClusterConfiguration ?? '')?.[1];
  if (fromConfig) return fromConfig;
  const kubelets = list<Node>('Node').map((n) => n.status?.nodeInfo?.kubeletVersion).filter((v): v is string => !!v && /^v\d+\.\d+\.\d+/.test(v)).sort(cmp);
  return kubelets[kubelets.length - 1];
}

/** A /version body (version.Info) for a Kubernetes version, the other fields as `base` gives them. */
export function versionInfo<T extends { major: string; minor: string; gitVersion: string }>(base: T, version: string | undefined): T {
  const m = /^v(\d+)\.(\d+)\.\d+/.exec(version ?? '');
  if (!m) return base;
  return { ...base, major: m[1]!, minor: m[2]!, gitVersion: version! };
}
