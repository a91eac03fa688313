/**
 * Pod objects of the simulated workload clusters' system workloads, built the
 * way the kubelet (static/mirror pods), the DaemonSet controller and the
 * ReplicaSet controller + scheduler leave them (docs/workload.md):
 *
 * - mirror pods: `<component>-<node>` (kubelet's static pod naming:
 *   pkg/kubelet/config generates `<pod name>-<node name>`), annotation
 *   `kubernetes.io/config.mirror` (corev1.MirrorPodAnnotationKey), labels
 *   `component`, `tier: control-plane` as kubeadm's static pod manifests
 *   (cmd/kubeadm/app/util/staticpod) carry them, owned by the Node;
 * - DaemonSet / ReplicaSet pods: controller ownerReference to their
 *   DaemonSet / ReplicaSet (what drain's daemonSetFilter and
 *   unreplicatedFilter look at, cluster-api
 *   internal/controllers/machine/drain/filters.go).
 *
 * Status: Running with Ready = the node's Ready (and not the testbed fault
 * annotation `testbed.hcs/pod-not-ready`); Pending/Unschedulable when no node
 * is bound. Pure functions only; the controller is system-pods.ts.
 */
import { createHash } from 'node:crypto';
import { nodeReady, type Node } from '../../product/api/core.js';
import { rfc3339 } from '../../core/clock.js';
import type { KubeObject, OwnerReference } from '../../core/kube/types.js';

/** corev1.MirrorPodAnnotationKey. */
export const ANN_CONFIG_MIRROR = 'kubernetes.io/config.mirror';
export const ANN_CONFIG_HASH = 'kubernetes.io/config.hash';
export const ANN_CONFIG_SOURCE = 'kubernetes.io/config.source';
/** Testbed fault: a pod annotated with this (any value) is kept not Ready (its container crash-loops). */
export const ANN_POD_NOT_READY = 'testbed.hcs/pod-not-ready';
/** The label kubeadm's mark-control-plane phase puts on control-plane nodes (constants.LabelNodeRoleControlPlane). */
export const LABEL_ROLE_CONTROL_PLANE = 'node-role.kubernetes.io/control-plane';
/** kubeadm's control-plane taint (constants.ControlPlaneTaint). */
export const TAINT_CONTROL_PLANE = { key: LABEL_ROLE_CONTROL_PLANE, effect: 'NoSchedule' };
export const SYSTEM_NAMESPACE = 'kube-system';

export interface PodContainerStatus {
  name: string;
  ready: boolean;
  started: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  state: Record<string, unknown>;
}

export interface PodCondition {
  type: string;
  status: 'True' | 'False';
  reason?: string;
  message?: string;
  lastTransitionTime: string;
}

export interface Pod extends KubeObject {
  spec: {
    nodeName?: string;
    containers: { name: string; image: string }[];
    hostNetwork?: boolean;
    priorityClassName?: string;
    tolerations?: { key?: string; operator?: string; effect?: string }[];
    nodeSelector?: Record<string, string>;
    restartPolicy?: string;
    schedulerName?: string;
  };
  status?: {
    phase?: string;
    conditions?: PodCondition[];
    hostIP?: string;
    podIP?: string;
    startTime?: string;
    containerStatuses?: PodContainerStatus[];
    qosClass?: string;
  };
}

export function shortHash(s: string, n: number): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  const h = createHash('sha256').update(s).digest();
  let out = '';
  for (let i = 0; i < n; i++) out += alphabet[h[i]! % alphabet.length];
  return out;
}

export function nodeInternalIP(node: Node | undefined): string | undefined {
  return node?.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
}

/** A pod IP in Kube-OVN's default subnet ovn-default 10.16.0.0/16 (dist/images/install.sh POD_CIDR), fixed by the pod name. */
export function podNetworkIP(podName: string): string {
  const h = createHash('sha256').update(podName).digest();
  return `10.16.${h[0]!}.${(h[1]! % 253) + 2}`;
}

export function isMirrorPod(p: KubeObject): boolean {
  return !!p.metadata.annotations && ANN_CONFIG_MIRROR in p.metadata.annotations;
}

export function podReady(p: Pod): boolean {
  return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** Whether the pod should be Ready: bound to a Ready node and not carrying the fault annotation. */
export function wantReady(p: Pod, node: Node | undefined): boolean {
  return !!p.spec.nodeName && !!node && nodeReady(node) && !(p.metadata.annotations && ANN_POD_NOT_READY in p.metadata.annotations);
}

export interface PodTemplate {
  name: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  owner: OwnerReference;
  containers: { name: string; image: string }[];
  hostNetwork: boolean;
  priorityClassName: string;
  tolerations?: Pod['spec']['tolerations'];
  nodeSelector?: Record<string, string>;
}

/** The status a pod has on `node` (undefined: not scheduled) at `nowMs`. */
export function podStatus(p: Pick<Pod, 'metadata' | 'spec'>, node: Node | undefined, nowMs: number, prev?: Pod['status'], unschedulable?: string): NonNullable<Pod['status']> {
  const now = rfc3339(nowMs);
  const keep = (type: string, status: 'True' | 'False'): string => {
    const c = prev?.conditions?.find((x) => x.type === type);
    return c && c.status === status ? c.lastTransitionTime : now;
  };
  if (!p.spec.nodeName) {
    return {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: unschedulable ?? '0/0 nodes are available', lastTransitionTime: keep('PodScheduled', 'False') }],
      qosClass: 'Burstable',
    };
  }
  const ready = wantReady(p as Pod, node);
  const st = ready ? 'True' : 'False';
  const started = prev?.startTime ?? now;
  const hostIP = nodeInternalIP(node);
  const podIP = p.spec.hostNetwork ? hostIP : podNetworkIP(p.metadata.name);
  const crash = !!(p.metadata.annotations && ANN_POD_NOT_READY in p.metadata.annotations);
  return {
    phase: 'Running',
    conditions: [
      { type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: keep('PodReadyToStartContainers', 'True') },
      { type: 'Initialized', status: 'True', lastTransitionTime: keep('Initialized', 'True') },
      { type: 'Ready', status: st, ...(ready ? {} : { reason: 'ContainersNotReady', message: `containers with unready status: [${p.spec.containers.map((c) => c.name).join(' ')}]` }), lastTransitionTime: keep('Ready', st) },
      { type: 'ContainersReady', status: st, ...(ready ? {} : { reason: 'ContainersNotReady', message: `containers with unready status: [${p.spec.containers.map((c) => c.name).join(' ')}]` }), lastTransitionTime: keep('ContainersReady', st) },
      { type: 'PodScheduled', status: 'True', lastTransitionTime: keep('PodScheduled', 'True') },
    ],
    ...(hostIP ? { hostIP } : {}),
    ...(podIP ? { podIP } : {}),
    startTime: started,
    containerStatuses: p.spec.containers.map((c) => {
      const before = prev?.containerStatuses?.find((x) => x.name === c.name);
      const restarts = (before?.restartCount ?? 0) + (crash && before?.ready ? 1 : 0);
      return {
        name: c.name,
        ready,
        started: ready,
        restartCount: restarts,
        image: c.image,
        imageID: '',
        state: crash ? { waiting: { reason: 'CrashLoopBackOff', message: `back-off restarting failed container ${c.name} (fault annotation ${ANN_POD_NOT_READY})` } } : { running: { startedAt: started } },
      };
    }),
    qosClass: 'Burstable',
  };
}

/** A new pod object from a template, bound to `node` (or Pending when undefined). */
export function newPod(t: PodTemplate, node: Node | undefined, nowMs: number, unschedulable?: string): Pod {
  const base: Pick<Pod, 'metadata' | 'spec'> = {
    metadata: {
      name: t.name,
      namespace: SYSTEM_NAMESPACE,
      labels: { ...t.labels },
      ...(t.annotations ? { annotations: { ...t.annotations } } : {}),
      ownerReferences: [t.owner],
    },
    spec: {
      ...(node ? { nodeName: node.metadata.name } : {}),
      containers: t.containers.map((c) => ({ ...c })),
      ...(t.hostNetwork ? { hostNetwork: true } : {}),
      priorityClassName: t.priorityClassName,
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      ...(t.tolerations ? { tolerations: t.tolerations.map((x) => ({ ...x })) } : {}),
      ...(t.nodeSelector ? { nodeSelector: { ...t.nodeSelector } } : {}),
    },
  };
  return { apiVersion: 'v1', kind: 'Pod', ...base, status: podStatus(base, node, nowMs, undefined, unschedulable) } as Pod;
}

/** Whether the status differs from the one `podStatus` gives now (readiness, binding, IPs). */
export function statusOutdated(p: Pod, node: Node | undefined): boolean {
  if (!p.spec.nodeName) return p.status?.phase !== 'Pending';
  if (p.status?.phase !== 'Running') return true;
  if (podReady(p) !== wantReady(p, node)) return true;
  const hostIP = nodeInternalIP(node);
  return !!hostIP && p.status?.hostIP !== hostIP;
}

/** Taints of a node that a pod with these tolerations does not tolerate (NoSchedule / NoExecute only). */
export function untoleratedTaints(node: Node, tolerations: Pod['spec']['tolerations'] = []): string[] {
  const out: string[] = [];
  for (const t of node.spec?.taints ?? []) {
    if (t.effect !== 'NoSchedule' && t.effect !== 'NoExecute') continue;
    const ok = tolerations.some((x) => (x.operator === 'Exists' && (!x.key || x.key === t.key)) || x.key === t.key) && tolerations.some((x) => !x.effect || x.effect === t.effect);
    if (!ok) out.push(`${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`);
  }
  return out;
}
