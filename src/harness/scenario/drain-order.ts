/**
 * MD-4 (scale down: drain, then delete the ECS, then the Machine): a Machine's
 * Node is drained before its infrastructure goes (issue 22). Checked once per
 * Machine, at the first instant its infrastructure machine (the HCSMachine)
 * is being deleted or gone while the Machine is being deleted: no pod that a
 * drain evicts is still bound to its Node then.
 *
 * Upstream, cluster-api v1.10 internal/controllers/machine/machine_controller.go
 * reconcileDelete: when isDeleteNodeAllowed (the Cluster and its control plane
 * object not being deleted, a nodeRef, an active control plane Machine or an
 * externally managed control plane) and isNodeDrainAllowed (no
 * `machine.cluster.x-k8s.io/exclude-node-draining` annotation, spec.nodeDrainTimeout
 * unset or not yet exceeded since the v1beta1 `DrainingSucceeded` condition's
 * lastTransitionTime), drainNode evicts the Node's pods and the reconcile
 * returns until they are gone (v1beta1 `DrainingSucceeded` False/Draining, then
 * True; the v1beta2 `Deleting` condition says DrainingNode meanwhile); only
 * then the volumes are waited for and the infrastructure machine is deleted.
 * The Machine deletion page of the Cluster API book states the same order:
 * https://cluster-api.sigs.k8s.io/tasks/automated-machine-management/machine_deletions
 * Which pods a drain evicts (internal/controllers/machine/drain/filters.go, after
 * kubectl's drain): not DaemonSet-managed, not mirror (static) pods, not labelled
 * `cluster.x-k8s.io/drain: skip`; pods already being deleted are waited for, not
 * evicted, and finished pods hold nothing, so neither counts here.
 *
 * Read from the objects only: Machines (annotations, spec.nodeDrainTimeout,
 * status.nodeRef, the DrainingSucceeded condition, labels), the Cluster and its
 * control plane object, the infrastructure machine, the workload cluster's Pods.
 * The condition is not taken as proof: a Machine whose DrainingSucceeded says
 * True while evictable pods are still on its Node is the bug this catches.
 * Upstream also skips the drain of a KubeadmControlPlane Machine whose
 * `pre-terminate.delete.hook.machine.cluster.x-k8s.io/kcp-cleanup` hook KCP
 * already removed; KCP removes it only once the Machine waits for its
 * pre-terminate hooks, i.e. after the drain, so that changes nothing here.
 */
import { LABEL_CLUSTER_NAME, LABEL_CONTROL_PLANE, type Cluster, type Machine } from '../../product/api/capi.js';
import { parseDuration } from '../../core/clock.js';
import { getShared, listShared } from '../../core/kube/client.js';
import type { KubeObject } from '../../core/kube/types.js';
import type { ContractFinding } from './disk-reuse.js';
import type { StateSource } from './world.js';

/** clusterv1.ExcludeNodeDrainingAnnotation. */
const ANN_EXCLUDE_NODE_DRAINING = 'machine.cluster.x-k8s.io/exclude-node-draining';
/** The kubelet's mirror-pod annotation (corev1.MirrorPodAnnotationKey). */
const ANN_MIRROR = 'kubernetes.io/config.mirror';
/** clusterv1.PodDrainLabel with the value that makes drain skip a pod. */
const LABEL_POD_DRAIN = 'cluster.x-k8s.io/drain';

type PodLike = KubeObject & { status?: { phase?: string } };
type ControlPlaneLike = KubeObject & { status?: { externalManagedControlPlane?: boolean } };

/** The pods a drain evicts ("ns/name"), from the pods bound to a Node. */
export function evictablePods(pods: readonly PodLike[]): string[] {
  return pods
    .filter((p) => {
      if (p.metadata.deletionTimestamp) return false;
      if (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') return false;
      if (p.metadata.labels?.[LABEL_POD_DRAIN] === 'skip') return false;
      if (p.metadata.annotations && ANN_MIRROR in p.metadata.annotations) return false;
      return !p.metadata.ownerReferences?.some((r) => r.controller && r.kind === 'DaemonSet');
    })
    .map((p) => `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`)
    .sort();
}

export class DrainOrderTracker {
  /** Machines (namespace/name/uid) already judged: the check is made once, when the infrastructure starts to go. */
  private readonly judged = new Set<string>();

  constructor(private readonly world: StateSource) {}

  async findings(): Promise<ContractFinding[]> {
    const out: ContractFinding[] = [];
    const machines = await listShared<Machine>(this.world.mgmt, 'Machine');
    for (const m of machines) {
      if (!m.metadata.deletionTimestamp) continue;
      const id = `${m.metadata.namespace}/${m.metadata.name}/${m.metadata.uid ?? ''}`;
      if (this.judged.has(id)) continue;
      const ns = m.metadata.namespace ?? 'default';
      const ir = m.spec.infrastructureRef;
      if (!ir?.kind) continue;
      const infra = await getShared(this.world.mgmt, { kind: ir.kind, namespace: ir.namespace ?? ns, name: ir.name });
      if (infra && !infra.metadata.deletionTimestamp) continue; // its infrastructure is not going yet
      this.judged.add(id);
      const node = m.status?.nodeRef?.name;
      if (!node || !(await this.drainDue(m, ns))) continue;
      const workload = this.world.workloads.client(ns, m.spec.clusterName);
      if (!(await getShared(workload, { kind: 'Node', name: node }))) continue;
      const left = evictablePods(await listShared<PodLike>(workload, 'Pod', { fieldSelector: `spec.nodeName=${node}` }));
      if (!left.length) continue;
      const drained = m.status?.conditions?.find((c) => c.type === 'DrainingSucceeded');
      out.push({
        rule: 'MD-4',
        key: `MD-4/undrained/${ns}/${m.metadata.name}`,
        message:
          `Machine ${ns}/${m.metadata.name}: its ${ir.kind} ${ir.name} is ${infra ? 'being deleted' : 'gone'} while Node ${node} still runs ${left.length} pod${left.length > 1 ? 's' : ''} a drain evicts ` +
          `(${left.join(', ')}; DrainingSucceeded ${drained ? `${drained.status}${drained.reason ? `/${drained.reason}` : ''}` : 'not set'}): the Node must be drained before its infrastructure goes`,
        refs: [m.metadata.name, ir.name, node],
      });
    }
    return out;
  }

  /**
   * Whether upstream drains this Machine's Node before deleting its infrastructure: isDeleteNodeAllowed and
   * isNodeDrainAllowed (module comment). False where upstream deletes the infrastructure without a (complete) drain.
   */
  private async drainDue(m: Machine, ns: string): Promise<boolean> {
    if (m.metadata.annotations && ANN_EXCLUDE_NODE_DRAINING in m.metadata.annotations) return false;
    const timeout = m.spec.nodeDrainTimeout ? parseDuration(m.spec.nodeDrainTimeout) : 0;
    const drained = m.status?.conditions?.find((c) => c.type === 'DrainingSucceeded');
    if (timeout > 0 && drained?.lastTransitionTime && this.world.clock.now() - Date.parse(drained.lastTransitionTime) >= timeout) return false;
    const cluster = await getShared<Cluster>(this.world.mgmt, { kind: 'Cluster', namespace: ns, name: m.spec.clusterName });
    if (cluster?.metadata.deletionTimestamp) return false;
    const ref = cluster?.spec.controlPlaneRef;
    if (ref?.kind) {
      const cp = await getShared<ControlPlaneLike>(this.world.mgmt, { kind: ref.kind, namespace: ref.namespace ?? ns, name: ref.name });
      if (cp?.metadata.deletionTimestamp) return false;
      if (cp?.status?.externalManagedControlPlane === true) return true;
    }
    const cpMachines = await listShared<Machine>(this.world.mgmt, 'Machine', { namespace: ns, labelSelector: `${LABEL_CLUSTER_NAME}=${m.spec.clusterName},${LABEL_CONTROL_PLANE}` });
    return cpMachines.some((x) => !x.metadata.deletionTimestamp);
  }
}
