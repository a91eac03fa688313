/**
 * The cni-kube-ovn AppRelease the provider owns in the workload cluster
 * (OVN-1, OVN-2, OVN-3):
 *
 * - created once, when the cluster is first built (HCSCluster ready and, when
 *   the Cluster has a control plane reference, the control plane ready), in
 *   namespace cpaas-system of the workload cluster: releaseName
 *   cpaas-kube-ovn, chart acp/chart-cpaas-kube-ovn, targetRevision from the
 *   Cluster annotation cpaas.io/kube-ovn-version;
 * - afterwards only spec.values is reconciled (cluster name, CIDRs, registry,
 *   control plane node list), with a JSON patch of /spec/values alone, so a
 *   targetRevision patched by the operator is never overwritten;
 * - a changed annotation does not move the chart: the provider reports the
 *   difference (Normal event, log) and leaves the AppRelease alone.
 */
import { LABEL_CLUSTER_NAME, LABEL_CONTROL_PLANE, type Cluster, type Machine } from '../api/capi.js';
import type { HCSCluster } from '../api/hcs.js';
import { listShared, type KubeClient, type ListOptions } from '../../core/kube/client.js';
import { keyOf } from '../../core/kube/types.js';
import { KubeApiError } from '../../core/kube/errors.js';
import type { ControllerContext } from '../../core/runtime/context.js';
import { APPRELEASE_API_VERSION, chartOf, type AppRelease } from '../api/apprelease.js';
import { KUBE_OVN_CHART } from '../matrix/matrix.js';

export const KUBE_OVN_APPRELEASE = 'cni-kube-ovn';
export const KUBE_OVN_NAMESPACE = 'cpaas-system';
export const KUBE_OVN_RELEASE_NAME = 'cpaas-kube-ovn';
export const ANN_KUBE_OVN_VERSION = 'cpaas.io/kube-ovn-version';
/** Registry the workload cluster pulls platform images from (Cluster annotation; default below). */
export const ANN_REGISTRY = 'cpaas.io/registry-address';
export const DEFAULT_REGISTRY = 'registry.cpaas.local:60080';
export const COND_KUBE_OVN = 'KubeOvnReleaseReady';

export interface KubeOvnValues {
  clusterName: string;
  cidr: { pods: string[]; services: string[] };
  registry: string;
  controlPlaneNodes: string[];
}

export type KubeOvnOutcome =
  | { kind: 'waiting'; reason: string; message: string; rules: string[] }
  | { kind: 'created'; targetRevision: string }
  | { kind: 'values-updated'; targetRevision: string }
  | { kind: 'unchanged'; targetRevision: string; annotationDiffers?: string };

/** The Cluster owning an HCSCluster: label, ownerReference, infrastructureRef, else the same name. */
export async function clusterForHCSCluster(mgmt: KubeClient, hc: HCSCluster): Promise<Cluster | undefined> {
  const ns = hc.metadata.namespace ?? 'default';
  const byName = hc.metadata.labels?.[LABEL_CLUSTER_NAME] ?? hc.metadata.ownerReferences?.find((r) => r.kind === 'Cluster')?.name;
  if (byName) return mgmt.get<Cluster>({ kind: 'Cluster', namespace: ns, name: byName });
  const all = await mgmt.list<Cluster>('Cluster', { namespace: ns });
  return all.find((c) => c.spec.infrastructureRef?.kind === 'HCSCluster' && c.spec.infrastructureRef.name === hc.metadata.name) ?? all.find((c) => c.metadata.name === hc.metadata.name);
}

/**
 * The control plane's Machines of a management store, kept from a Machine
 * watch with the control-plane label selector (an informer with a label
 * selector, as controller-runtime's cache starts on the first list). Only for
 * clients with a synchronous snapshot (the embedded store), taken right before
 * the watch starts, so snapshot plus watch see every version exactly once.
 */
class ControlPlaneMachines {
  private readonly byKey = new Map<string, Readonly<Machine>>();

  constructor(machines: readonly Readonly<Machine>[]) {
    for (const m of machines) this.byKey.set(keyOf(m.metadata), m);
  }

  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', m: Readonly<Machine>): void {
    if (type === 'DELETED') this.byKey.delete(keyOf(m.metadata));
    else this.byKey.set(keyOf(m.metadata), m);
  }

  /** The list `{namespace, labelSelector: cluster-name=<cluster>,control-plane}` would return (order aside: callers sort). */
  list(namespace: string, cluster: string): Readonly<Machine>[] {
    return [...this.byKey.values()].filter((m) => m.metadata.namespace === namespace && m.metadata.labels?.[LABEL_CLUSTER_NAME] === cluster);
  }
}

const controlPlaneCaches = new WeakMap<object, ControlPlaneMachines>();

/** The control plane's Machines of `cluster`: from the kept set with a synchronous client, else listed with the label selector. */
async function controlPlaneMachines(mgmt: KubeClient, namespace: string, cluster: string): Promise<readonly Readonly<Machine>[]> {
  const snapshot = (mgmt as { listSharedSync?: (kind: string, opts?: ListOptions) => readonly Readonly<Machine>[] }).listSharedSync;
  // Only the control plane's Machines: the apiserver (or store) filters on the label's existence, as the
  // filter on the whole cluster's Machines did here (`LABEL_CONTROL_PLANE in labels`).
  if (typeof snapshot !== 'function') return listShared<Machine>(mgmt, 'Machine', { namespace, labelSelector: `${LABEL_CLUSTER_NAME}=${cluster},${LABEL_CONTROL_PLANE}` });
  let kept = controlPlaneCaches.get(mgmt);
  if (!kept) {
    const k = new ControlPlaneMachines(snapshot.call(mgmt, 'Machine', { labelSelector: LABEL_CONTROL_PLANE }));
    mgmt.watch<Machine>('Machine', (e) => k.apply(e.type, e.object), { shared: true, labelSelector: LABEL_CONTROL_PLANE });
    controlPlaneCaches.set(mgmt, (kept = k));
  }
  return kept.list(namespace, cluster);
}

/** The values block the provider keeps in line (OVN-2). */
export async function desiredKubeOvnValues(mgmt: KubeClient, cluster: Cluster): Promise<KubeOvnValues> {
  const ns = cluster.metadata.namespace ?? 'default';
  const cps = await controlPlaneMachines(mgmt, ns, cluster.metadata.name);
  const nodes = cps
    .filter((m) => !m.metadata.deletionTimestamp)
    .map((m) => m.status?.nodeRef?.name)
    .filter((n): n is string => !!n)
    .sort();
  return {
    clusterName: cluster.metadata.name,
    cidr: { pods: cluster.spec.clusterNetwork?.pods?.cidrBlocks ?? [], services: cluster.spec.clusterNetwork?.services?.cidrBlocks ?? [] },
    registry: cluster.metadata.annotations?.[ANN_REGISTRY] ?? DEFAULT_REGISTRY,
    controlPlaneNodes: nodes,
  };
}

/** Create the AppRelease on first build, or reconcile its spec.values only. */
export async function reconcileKubeOvnRelease(ctx: ControllerContext, cluster: Cluster): Promise<KubeOvnOutcome> {
  const ns = cluster.metadata.namespace ?? 'default';
  if (cluster.spec.controlPlaneRef && !cluster.status?.controlPlaneReady) {
    return { kind: 'waiting', reason: 'WaitingForControlPlane', message: 'the workload cluster API is not up yet (control plane not ready)', rules: ['OVN-1'] };
  }
  const wl = ctx.workloads.client(ns, cluster.metadata.name);
  const ref = { kind: 'AppRelease', namespace: KUBE_OVN_NAMESPACE, name: KUBE_OVN_APPRELEASE };
  const values = await desiredKubeOvnValues(ctx.mgmt, cluster);
  const annotation = cluster.metadata.annotations?.[ANN_KUBE_OVN_VERSION];
  const existing = await wl.get<AppRelease>(ref);
  if (!existing) {
    if (!annotation) {
      return {
        kind: 'waiting',
        reason: 'MissingKubeOvnVersion',
        message: `Cluster ${cluster.metadata.name} has no annotation ${ANN_KUBE_OVN_VERSION}; the ${KUBE_OVN_APPRELEASE} AppRelease is created from it (set it to the kube-ovn column of the OS Support Matrix row)`,
        rules: ['OVN-1', 'UPG-4'],
      };
    }
    const ar: AppRelease = {
      apiVersion: APPRELEASE_API_VERSION,
      kind: 'AppRelease',
      metadata: {
        name: KUBE_OVN_APPRELEASE,
        namespace: KUBE_OVN_NAMESPACE,
        labels: { 'app.kubernetes.io/managed-by': 'cluster-api-provider-hcs', [LABEL_CLUSTER_NAME]: cluster.metadata.name },
      },
      spec: {
        destination: { namespace: 'kube-system' },
        source: { charts: [{ name: KUBE_OVN_CHART, releaseName: KUBE_OVN_RELEASE_NAME, targetRevision: annotation }] },
        values: { ...values },
      },
    };
    try {
      await wl.create(ar);
    } catch (e) {
      if (!(e instanceof KubeApiError && e.reason === 'AlreadyExists')) throw e;
      return { kind: 'unchanged', targetRevision: annotation };
    }
    return { kind: 'created', targetRevision: annotation };
  }
  const target = chartOf(existing).source?.targetRevision ?? '';
  const annotationDiffers = annotation && annotation !== target ? annotation : undefined;
  if (JSON.stringify(existing.spec.values ?? {}) !== JSON.stringify(values)) {
    // Only /spec/values: a concurrent targetRevision patch by the operator is never overwritten (OVN-2).
    await wl.patch(ref, 'json', [{ op: existing.spec.values === undefined ? 'add' : 'replace', path: '/spec/values', value: values }]);
    return { kind: 'values-updated', targetRevision: target };
  }
  return { kind: 'unchanged', targetRevision: target, ...(annotationDiffers ? { annotationDiffers } : {}) };
}
