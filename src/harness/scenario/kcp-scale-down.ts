/**
 * KCP-2: the KubeadmControlPlane removes the machine upstream would remove
 * (issue 22), checked whenever a control plane Machine starts being deleted
 * while the KCP scales down (more Machines than replicas, or a rollout with
 * outdated Machines and no room to surge — maxSurge 0 removes first, KCP-1).
 *
 * Upstream cluster-api v1.10, controlplane/kubeadm/internal/controllers/
 * scale.go selectMachineForScaleDown: the candidates are, in this order, the
 * outdated Machines with the delete annotation, any Machine with it, the
 * outdated Machines with unhealthy control plane components, the outdated
 * Machines, all Machines; then ControlPlane.MachineInFailureDomainWithMostMachines
 * (controlplane/kubeadm/internal/control_plane.go and
 * util/failuredomains/failure_domains.go PickMost): the oldest candidate of a
 * failure domain not (or no longer) in the Cluster's control plane failure
 * domains if there is one, else of the failure domain with the most
 * candidates, then the most Machines (ties in map order: any of the tied ones
 * is accepted); `Machines.Oldest()` by creationTimestamp (second resolution:
 * Machines created in the same second all count as oldest).
 *
 * Read from the objects only: Machines (owner KubeadmControlPlane,
 * creationTimestamp, spec.version, spec.failureDomain, the delete
 * annotation), their infrastructure objects' `cluster.x-k8s.io/cloned-from-name`,
 * the KCP spec, the Cluster's `status.failureDomains`, the Nodes. A Machine is
 * outdated when its version or template differs from the KCP's (the model
 * has no `rolloutAfter`). Where the choice
 * depends on what the objects do not show — an outdated Machine whose Node
 * is not Ready (upstream reads control plane component conditions; a Machine
 * without a Node yet has none and is not unhealthy), a deletion made by a
 * scenario step — nothing is asserted.
 */
import { ANNOTATION_CLONED_FROM_NAME, ANNOTATION_DELETE_MACHINE, LABEL_CLUSTER_NAME, type Cluster, type KubeadmControlPlane, type Machine } from '../../product/api/capi.js';
import { nodeReady, type Node } from '../../product/api/core.js';
import type { LogEvent } from '../../core/events.js';
import { getShared, listShared } from '../../core/kube/client.js';
import type { KubeObject } from '../../core/kube/types.js';
import type { ContractFinding } from './disk-reuse.js';
import type { StateSource } from './world.js';

interface CpMachine {
  name: string;
  version: string;
  /** The infrastructure object's cloned-from-name annotation. */
  clonedFrom?: string;
  /** creationTimestamp, ms (second resolution). */
  created: number;
  failureDomain?: string;
  outdated: boolean;
  deleteAnnotation: boolean;
  healthy: boolean;
}

interface KcpSnapshot {
  machines: CpMachine[];
  /** Some Machine was being deleted already (KCP removes one at a time: the next choice is not made yet). */
  deleting: boolean;
}

function oldest(ms: CpMachine[]): CpMachine[] {
  const min = Math.min(...ms.map((m) => m.created));
  return ms.filter((m) => m.created === min);
}

/** The Machines upstream may pick (more than one where upstream's own order is a tie). */
export function scaleDownChoices(all: CpMachine[], controlPlaneFDs: string[] | undefined): CpMachine[] | undefined {
  const outdated = all.filter((m) => m.outdated);
  let candidates = all;
  if (outdated.some((m) => m.deleteAnnotation)) candidates = outdated.filter((m) => m.deleteAnnotation);
  else if (all.some((m) => m.deleteAnnotation)) candidates = all.filter((m) => m.deleteAnnotation);
  // Upstream's "outdated machines with unhealthy components" (collections.HasUnhealthyControlPlaneComponents over the
  // outdated ones only) is not visible in the objects: not asserted when an outdated machine's Node is not Ready.
  else if (outdated.some((m) => !m.healthy)) return undefined;
  else if (outdated.length) candidates = outdated;
  if (!candidates.length) return undefined;
  const fds = controlPlaneFDs ?? [];
  if (!fds.length) return oldest(candidates);
  const notIn = candidates.filter((m) => !m.failureDomain || !fds.includes(m.failureDomain));
  if (notIn.length) {
    const fdsOfOldest = new Set(oldest(notIn).map((m) => m.failureDomain));
    return [...fdsOfOldest].flatMap((fd) => oldest(candidates.filter((m) => m.failureDomain === fd)));
  }
  const score = (fd: string): [number, number] => [candidates.filter((m) => m.failureDomain === fd).length, all.filter((m) => m.failureDomain === fd).length];
  const withCandidates = fds.filter((fd) => score(fd)[0] > 0);
  const best = withCandidates.reduce<[number, number]>((b, fd) => {
    const s = score(fd);
    return s[0] > b[0] || (s[0] === b[0] && s[1] > b[1]) ? s : b;
  }, [0, 0]);
  return withCandidates.filter((fd) => score(fd)[0] === best[0] && score(fd)[1] === best[1]).flatMap((fd) => oldest(candidates.filter((m) => m.failureDomain === fd)));
}

/** Upstream's "needs rollout" as the objects show it: another version or another infrastructure template. */
function outdatedFor(kcp: Readonly<KubeadmControlPlane>, m: { version: string; clonedFrom?: string }): boolean {
  const v = (x: string): string => x.replace(/^v?/, 'v');
  return v(m.version) !== v(kcp.spec.version) || (m.clonedFrom !== undefined && m.clonedFrom !== kcp.spec.machineTemplate.infrastructureRef.name);
}

export class KcpScaleDownTracker {
  private readonly last = new Map<string, KcpSnapshot>();

  constructor(
    private readonly world: StateSource,
    private readonly events: () => readonly LogEvent[],
  ) {}

  async findings(): Promise<ContractFinding[]> {
    const w = this.world;
    const out: ContractFinding[] = [];
    const machines = await listShared<Machine>(w.mgmt, 'Machine');
    for (const kcp of await listShared<KubeadmControlPlane>(w.mgmt, 'KubeadmControlPlane')) {
      const ns = kcp.metadata.namespace ?? 'default';
      const key = `${ns}/${kcp.metadata.name}`;
      const mine = machines.filter((m) => m.metadata.namespace === ns && m.metadata.ownerReferences?.some((o) => o.kind === 'KubeadmControlPlane' && o.name === kcp.metadata.name && o.controller));
      const snapshot = await this.snapshot(kcp, mine);
      const before = this.last.get(key);
      this.last.set(key, snapshot);
      if (!before || before.deleting || kcp.metadata.deletionTimestamp) continue;
      // The machines as they were, judged against the KCP as it is now (the edit that starts a rollout and the KCP's
      // first deletion come within one quiescent interval).
      const prev = { machines: before.machines.map((m) => ({ ...m, outdated: outdatedFor(kcp, m) })) };
      const live = new Set(mine.filter((m) => !m.metadata.deletionTimestamp).map((m) => m.metadata.name));
      const removed = prev.machines.filter((m) => !live.has(m.name));
      if (removed.length !== 1) continue;
      const victim = removed[0]!;
      const replicas = kcp.spec.replicas ?? 1;
      const maxSurge = Math.min(1, Math.max(0, Number(kcp.spec.rolloutStrategy?.rollingUpdate?.maxSurge ?? 1) || 0));
      const scalingDown = prev.machines.length > replicas || (prev.machines.some((m) => m.outdated) && prev.machines.length >= replicas + maxSurge);
      if (!scalingDown || this.deletedByStep(victim.name)) continue;
      const clusterName = mine[0]?.spec.clusterName ?? kcp.metadata.labels?.[LABEL_CLUSTER_NAME];
      const cluster = clusterName ? await getShared<Cluster>(w.mgmt, { kind: 'Cluster', namespace: ns, name: clusterName }) : undefined;
      const fdMap = (cluster?.status as { failureDomains?: Record<string, { controlPlane?: boolean }> } | undefined)?.failureDomains;
      const fds = fdMap ? Object.entries(fdMap).filter(([, v]) => v.controlPlane).map(([k]) => k) : undefined;
      const choices = scaleDownChoices(prev.machines, fds);
      if (!choices || choices.some((c) => c.name === victim.name)) continue;
      const describe = (m: CpMachine): string => `${m.name} (created ${new Date(m.created).toISOString()}${m.failureDomain ? `, failure domain ${m.failureDomain}` : ''}${m.outdated ? ', outdated' : ', up to date'})`;
      out.push({
        rule: 'KCP-2',
        key: `KCP-2/scale-down/${key}/${victim.name}`,
        message: `KubeadmControlPlane ${key} removed control plane Machine ${describe(victim)}, but upstream removes ${choices.map(describe).join(' or ')}: among the outdated machines, in the failure domain with the most machines, the oldest (cluster-api v1.10 selectMachineForScaleDown); machines were ${prev.machines.map((m) => m.name).join(', ')}`,
        refs: [victim.name, kcp.metadata.name],
      });
    }
    return out;
  }

  /** A scenario step deleted the Machine itself (kubectl delete, an edit): not the KCP's choice. */
  private deletedByStep(machine: string): boolean {
    const evs = this.events();
    for (let i = evs.length - 1; i >= 0 && i >= evs.length - 2000; i--) {
      const e = evs[i]!;
      if (e.source === 'scenario' && e.type === 'step.action' && e.message.includes(machine)) return true;
    }
    return false;
  }

  private async snapshot(kcp: Readonly<KubeadmControlPlane>, mine: readonly Readonly<Machine>[]): Promise<KcpSnapshot> {
    const w = this.world;
    const ns = kcp.metadata.namespace ?? 'default';
    const out: CpMachine[] = [];
    let deleting = false;
    for (const m of mine) {
      if (m.metadata.deletionTimestamp) {
        deleting = true;
        continue;
      }
      const created = Date.parse(m.metadata.creationTimestamp ?? '') || 0;
      const infra = m.spec.infrastructureRef ? await getShared<KubeObject>(w.mgmt, { kind: m.spec.infrastructureRef.kind ?? 'HCSMachine', namespace: ns, name: m.spec.infrastructureRef.name }) : undefined;
      const clonedFrom = infra?.metadata.annotations?.[ANNOTATION_CLONED_FROM_NAME];
      const base = { name: m.metadata.name, version: m.spec.version ?? '', ...(clonedFrom !== undefined ? { clonedFrom } : {}) };
      // A Machine without a Node yet is not unhealthy for the choice: upstream sets no v1beta1 component or etcd
      // condition on it (controlplane/kubeadm/internal/workload_cluster_conditions.go, provisioning machines get only
      // v1beta2 Unknown ones; util/collections HasUnhealthyControlPlaneComponents: "The machine without a node ...
      // do not treat it as unhealthy").
      let healthy = true;
      if (m.status?.nodeRef) {
        const node = await getShared<Node>(w.workloads.client(ns, m.spec.clusterName), { kind: 'Node', name: m.status.nodeRef.name });
        healthy = !!node && nodeReady(node as Node);
      }
      out.push({
        ...base,
        created,
        ...(m.spec.failureDomain ? { failureDomain: m.spec.failureDomain } : {}),
        outdated: outdatedFor(kcp, base),
        deleteAnnotation: !!m.metadata.annotations && ANNOTATION_DELETE_MACHINE in m.metadata.annotations,
        healthy,
      });
    }
    return { machines: out, deleting };
  }
}
