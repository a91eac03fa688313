/**
 * Whether deleting a Machine may drain, wait for the volumes of, and delete
 * its Node: upstream v1.10.10 internal/controllers/machine/machine_controller.go
 * isDeleteNodeAllowed, called at the top of reconcileDelete. When it is not
 * allowed, upstream skips the whole Node part of the deletion (pre-drain
 * hooks, drain, volume-detach wait and the Node deletion itself) and goes
 * straight to the pre-terminate hooks and the infrastructure / bootstrap
 * deletion; the Node stays in the workload cluster. The reason is only logged
 * ("Skipping deletion of Kubernetes Node associated with Machine as it is not
 * allowed", cause = the error text below): no condition, no Kubernetes Event
 * (the Deleting v1beta2 condition keeps its generic "Deletion started" /
 * "Waiting for <infra> to be deleted" reasons).
 *
 * The checks, in upstream's order:
 * 1. the Cluster is being deleted → `cluster is being deleted`;
 * 2. no status.nodeRef: upstream looks the Node up once more by the
 *    providerID (Machine spec, else the infrastructure machine's) and takes
 *    it as the nodeRef if found; still none → `noderef is nil`;
 * 3. spec.controlPlaneRef set: the object missing is logged and the checks
 *    go on; the object being deleted → `control plane is being deleted`;
 *    `status.externalManagedControlPlane: true` on it (util.IsExternalManagedControlPlane)
 *    → allowed, no Machine count;
 * 4. no active (not being deleted) Machine of the cluster carries the
 *    `cluster.x-k8s.io/control-plane` label (collections.ActiveMachines,
 *    ControlPlaneMachines) → `no control plane members`. The Machine being
 *    deleted never counts itself, so the last control plane Machine keeps
 *    its Node.
 * Upstream also declares errLastControlPlaneNode but v1.10 never returns it.
 */
import { LABEL_CLUSTER_NAME, LABEL_CONTROL_PLANE } from '../../product/api/capi.js';
import type { Cluster, Machine } from '../../product/api/capi.js';
import { getShared, listShared, type KubeClient } from '../../core/kube/client.js';
import type { KubeObject } from '../../core/kube/types.js';
import { isDeleting } from '../../core/kube/types.js';

/** upstream's error values (machine_controller.go), used as the logged cause. */
export const NODE_DELETE_SKIP = {
  clusterDeleting: 'cluster is being deleted',
  nilNodeRef: 'noderef is nil',
  controlPlaneDeleting: 'control plane is being deleted',
  noControlPlaneNodes: 'no control plane members',
} as const;
export type NodeDeleteSkip = (typeof NODE_DELETE_SKIP)[keyof typeof NODE_DELETE_SKIP];

export type NodeDeleteGate =
  | { allowed: true; nodeName: string; /** Set when the Node was found by providerID (upstream fills status.nodeRef). */ foundNode?: { name: string; uid?: string }; notes: string[] }
  | { allowed: false; cause: NodeDeleteSkip; notes: string[] };

export interface GateInputs {
  mgmt: KubeClient;
  machine: Readonly<Machine>;
  cluster: Readonly<Cluster> | undefined;
  /** The infrastructure machine's spec.providerID (upstream's fallback when the Machine has none). */
  infraProviderID?: string;
  /** The workload cluster's Node with this providerID (best effort, as upstream: errors count as not found). */
  nodeByProviderID: (providerID: string) => Promise<{ name: string; uid?: string } | undefined>;
}

interface ControlPlaneObject extends KubeObject {
  status?: { externalManagedControlPlane?: boolean };
}

export async function isDeleteNodeAllowed(i: GateInputs): Promise<NodeDeleteGate> {
  const notes: string[] = [];
  const { machine: m, cluster } = i;
  if (cluster && isDeleting(cluster)) return { allowed: false, cause: NODE_DELETE_SKIP.clusterDeleting, notes };

  let nodeName = m.status?.nodeRef?.name;
  let foundNode: { name: string; uid?: string } | undefined;
  const providerID = m.spec.providerID ?? i.infraProviderID;
  if (!nodeName && providerID) {
    foundNode = await i.nodeByProviderID(providerID).catch(() => undefined);
    nodeName = foundNode?.name;
  }
  if (!nodeName) return { allowed: false, cause: NODE_DELETE_SKIP.nilNodeRef, notes };

  const namespace = m.metadata.namespace ?? 'default';
  const clusterName = cluster?.metadata.name ?? m.spec.clusterName;
  const ref = cluster?.spec.controlPlaneRef;
  if (ref?.kind) {
    const refNs = ref.namespace ?? namespace;
    // Any error other than NotFound propagates: upstream returns it and the reconcile is retried.
    const cp = await getShared<ControlPlaneObject>(i.mgmt, { kind: ref.kind, namespace: refNs, name: ref.name });
    if (!cp) {
      notes.push(`Control plane object specified in cluster spec.controlPlaneRef does not exist: ${ref.kind} ${refNs}/${ref.name}`);
    } else {
      if (isDeleting(cp)) return { allowed: false, cause: NODE_DELETE_SKIP.controlPlaneDeleting, notes };
      if (cp.status?.externalManagedControlPlane === true) return { allowed: true, nodeName, ...(foundNode ? { foundNode } : {}), notes };
    }
  }

  // ControlPlaneSelectorForCluster: cluster-name=<cluster> and the control-plane label present (any value).
  const cpMachines = await listShared<Machine>(i.mgmt, 'Machine', { namespace, labelSelector: `${LABEL_CLUSTER_NAME}=${clusterName},${LABEL_CONTROL_PLANE}` });
  const activeControlPlane = cpMachines.filter((x) => !isDeleting(x));
  if (activeControlPlane.length === 0) return { allowed: false, cause: NODE_DELETE_SKIP.noControlPlaneNodes, notes };
  return { allowed: true, nodeName, ...(foundNode ? { foundNode } : {}), notes };
}
