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
 * An eviction here deletes the Pod at once (no PodDisruptionBudgets and no
 * grace period are modelled); the ReplicaSet then creates a replacement that
 * the workload scheduler puts on another Ready Node (system-pods.ts).
 */
import type { KubeClient } from '../kube/client.js';
import type { KubeObject } from '../kube/types.js';
import { isMirrorPod } from './pods.js';

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

type PodLike = KubeObject & { status?: { phase?: string } };

/** Evict a Pod (the Eviction subresource): without PodDisruptionBudgets this is a delete. */
export async function evictPod(client: KubeClient, namespace: string, name: string): Promise<void> {
  await client.delete({ kind: 'Pod', namespace, name }, { ignoreNotFound: true });
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
