/**
 * Node drain through the workload cluster's API, as Cluster API's Machine
 * controller does it (kubernetes-sigs/cluster-api
 * internal/controllers/machine/drain/drain.go and filters.go, which follow
 * kubectl's pkg/drain; read, not copied): list the Pods bound to the Node
 * (field selector spec.nodeName), then per Pod, in filter order:
 * - label `cluster.x-k8s.io/drain: skip` → skipped (drainLabelFilter);
 * - controlled by a DaemonSet that exists and not finished → skipped
 *   ("ignoring DaemonSet-managed Pod"); its DaemonSet gone → evicted with
 *   the warning "evicting orphaned DaemonSet-managed Pod" (daemonSetFilter);
 * - a mirror pod (annotation kubernetes.io/config.mirror) → skipped
 *   (mirrorPodFilter): only the kubelet removes static pods;
 * - already being deleted → waited for;
 * - everything else → evicted (policy/v1 Eviction), unmanaged pods with the
 *   warning "evicting Pod that has no controller".
 * An eviction here deletes the Pod at once (no grace period is modelled);
 * the ReplicaSet then creates a replacement that the workload scheduler puts
 * on another Ready Node (system-pods.ts).
 *
 * PodDisruptionBudget objects are not modelled (the workload API serves no
 * policy/v1 PodDisruptionBudget). Their effect is: the Node annotation
 * testbed.hcs/drain-blocked: "true" stands for a budget that allows no
 * disruption of the Pods on that Node, so their eviction is refused as the
 * apiserver refuses it (429 TooManyRequests; evictPod throws
 * EvictionBlockedError) — what Cluster API's drain then reports (MD-4).
 */
import type { Node } from '../../product/api/core.js';
import type { KubeClient } from '../../core/kube/client.js';
import type { KubeObject } from '../../core/kube/types.js';
import { isMirrorPod } from './pods.js';

/** Testbed knob: a Node carrying this annotation ("true") cannot be drained (pods blocked by a PDB). */
export const ANN_DRAIN_BLOCKED = 'testbed.hcs/drain-blocked';

/** clusterv1.PodDrainLabel. */
export const LABEL_POD_DRAIN = 'cluster.x-k8s.io/drain';

export interface DrainResult {
  /** "ns/name" of the pods evicted now. */
  evicted: string[];
  /** "ns/name: why" of the pods drain leaves alone. */
  skipped: string[];
  /** Warnings as kubectl/CAPI drain prints them. */
  warnings: string[];
  /** "ns/name" of pods still on the Node that drain waits for (being deleted). */
  waiting: string[];
}

type PodLike = KubeObject & { spec?: { nodeName?: string }; status?: { phase?: string } };

/** An eviction refused because the (modelled) disruption budget of the Pod allows none (MD-4). */
export class EvictionBlockedError extends Error {
  constructor(
    readonly pod: string,
    readonly node: string,
  ) {
    super(`Cannot evict pod as it would violate the pod's disruption budget.`);
  }
  /** The StatusCause message (the apiserver names the budget and its healthy counts). */
  get budgetMessage(): string {
    return `The disruption budget of the Pods on Node ${this.node} allows no disruption (annotation ${ANN_DRAIN_BLOCKED}: "true" on the Node stands for a PodDisruptionBudget that allows none; MD-4)`;
  }
}

/**
 * Evict a Pod, as the apiserver's pods/eviction subresource decides it
 * (kubernetes/kubernetes pkg/registry/core/pod/storage/eviction.go; read, not
 * copied): a Pod that is Pending, finished or already being deleted is
 * deleted without a budget check (canIgnorePDB); any other is refused with
 * EvictionBlockedError when its Node's budget allows no disruption, else
 * deleted. 'not-found' when there is no such Pod. `dryRun`: decide, write nothing.
 */
export async function evictPod(client: KubeClient, namespace: string, name: string, opts: { dryRun?: boolean } = {}): Promise<'evicted' | 'not-found'> {
  const pod = await client.get<PodLike>({ kind: 'Pod', namespace, name });
  if (!pod) return 'not-found';
  const phase = pod.status?.phase;
  const canIgnoreBudget = phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || !!pod.metadata.deletionTimestamp;
  const nodeName = pod.spec?.nodeName;
  if (!canIgnoreBudget && nodeName) {
    const node = await client.get<Node>({ kind: 'Node', name: nodeName });
    if (node?.metadata.annotations?.[ANN_DRAIN_BLOCKED] === 'true') throw new EvictionBlockedError(`${namespace}/${name}`, nodeName);
  }
  if (!opts.dryRun) await client.delete({ kind: 'Pod', namespace, name }, { ignoreNotFound: true });
  return 'evicted';
}

export async function drainNode(client: KubeClient, nodeName: string): Promise<DrainResult> {
  const pods = (await client.list<PodLike>('Pod', { fieldSelector: `spec.nodeName=${nodeName}` })).sort((a, b) => {
    const ka = `${a.metadata.namespace}/${a.metadata.name}`;
    const kb = `${b.metadata.namespace}/${b.metadata.name}`;
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
  const out: DrainResult = { evicted: [], skipped: [], warnings: [], waiting: [] };
  for (const p of pods) {
    const key = `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`;
    const finished = p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
    if (p.metadata.labels?.[LABEL_POD_DRAIN] === 'skip') {
      out.skipped.push(`${key}: label ${LABEL_POD_DRAIN}=skip`);
      continue;
    }
    const ctrl = p.metadata.ownerReferences?.find((r) => r.controller);
    if (ctrl?.kind === 'DaemonSet' && !finished) {
      const ds = await client.get({ kind: 'DaemonSet', namespace: p.metadata.namespace, name: ctrl.name });
      if (ds) {
        out.skipped.push(`${key}: DaemonSet-managed`);
        continue;
      }
      out.warnings.push(`evicting orphaned DaemonSet-managed Pod ${key}`);
    }
    if (isMirrorPod(p)) {
      out.skipped.push(`${key}: mirror pod`);
      continue;
    }
    if (p.metadata.deletionTimestamp) {
      out.waiting.push(key);
      continue;
    }
    if (!ctrl && !finished) out.warnings.push(`evicting Pod that has no controller ${key}`);
    await evictPod(client, p.metadata.namespace ?? 'default', p.metadata.name);
    if (await client.get({ kind: 'Pod', namespace: p.metadata.namespace, name: p.metadata.name })) out.waiting.push(key);
    out.evicted.push(key);
  }
  return out;
}
