/**
 * Where control plane machines are placed across failure domains (issue 37),
 * judged against failure domains derived independently of what the provider
 * and Cluster API published: the HCSCluster's spec.controlPlaneAvailabilityZones
 * that the cloud lists as availability zones (NovaListAvailabilityZones) —
 * never HCSCluster.status.failureDomains or Cluster.status.failureDomains,
 * which are the state judged. At every quiescent instant:
 *
 * - KCP-2: HCSCluster.status.failureDomains, once the HCSCluster is ready, and
 *   Cluster.status.failureDomains, once set, name exactly those zones as
 *   control plane failure domains;
 * - KCP-2: every control plane Machine not being deleted has a
 *   spec.failureDomain among them (KCP places every machine in one when the
 *   cluster has any; cluster-api v1.10 controlplane/kubeadm/internal/controllers/
 *   scale.go cloneConfigsAndGenerateMachine, ControlPlane.NextFailureDomainForScaleUp);
 * - KCP-2: while the control plane is at rest (spec.replicas machines, none
 *   being deleted, all on the KCP's version), the machines per failure domain
 *   differ by at most one (util/failuredomains PickFewest on scale up, PickMost
 *   on scale down keep them balanced);
 * - TPL-2: the server of every Machine with a failure domain is built in that
 *   availability zone (the provider passes Machine.spec.failureDomain as the
 *   server's availability_zone).
 *
 * controlPlaneFailureDomains is also what the KCP-2 scale-down invariant
 * (kcp-scale-down.ts) judges the KCP's choice against.
 */
import { LABEL_CLUSTER_NAME, type Cluster, type KubeadmControlPlane, type Machine } from '../../product/api/capi.js';
import type { HCSCluster, HCSMachine } from '../../product/api/hcs.js';
import { getShared, listShared } from '../../core/kube/client.js';
import type { ContractFinding } from './disk-reuse.js';
import type { StateSource } from './world.js';

/**
 * The control plane failure domains a cluster must have: its HCSCluster's spec.controlPlaneAvailabilityZones that the
 * cloud lists, in spec order; undefined when the Cluster has no HCSCluster or it names none. `fallback` (another
 * infrastructure kind) reads the Cluster's status.
 */
export async function controlPlaneFailureDomains(w: StateSource, namespace: string, clusterName: string): Promise<string[] | undefined> {
  const cluster = await getShared<Cluster>(w.mgmt, { kind: 'Cluster', namespace, name: clusterName });
  const ref = cluster?.spec.infrastructureRef;
  if (!ref) return undefined;
  if (ref.kind !== 'HCSCluster') {
    const fds = (cluster.status as { failureDomains?: Record<string, { controlPlane?: boolean }> } | undefined)?.failureDomains;
    return fds ? Object.entries(fds).filter(([, v]) => v.controlPlane).map(([k]) => k) : undefined;
  }
  const hc = await getShared<HCSCluster>(w.mgmt, { kind: 'HCSCluster', namespace, name: ref.name });
  const zones = hc?.spec.controlPlaneAvailabilityZones;
  if (!zones?.length) return undefined;
  const listed = w.cloud.availabilityZones?.();
  return [...new Set(zones)].filter((z) => !listed || listed.includes(z));
}

const cpOf = (fds: Record<string, { controlPlane?: boolean }> | undefined): string[] => Object.entries(fds ?? {}).filter(([, v]) => v.controlPlane).map(([k]) => k).sort();

export class CpPlacementTracker {
  constructor(private readonly world: StateSource) {}

  async findings(): Promise<ContractFinding[]> {
    const w = this.world;
    const out: ContractFinding[] = [];
    const machines = await listShared<Machine>(w.mgmt, 'Machine');
    const hcsMachines = new Map((await listShared<HCSMachine>(w.mgmt, 'HCSMachine')).map((m) => [`${m.metadata.namespace}/${m.metadata.name}`, m]));
    for (const kcp of await listShared<KubeadmControlPlane>(w.mgmt, 'KubeadmControlPlane')) {
      if (kcp.metadata.deletionTimestamp) continue;
      const ns = kcp.metadata.namespace ?? 'default';
      const key = `${ns}/${kcp.metadata.name}`;
      const mine = machines.filter((m) => m.metadata.namespace === ns && m.metadata.ownerReferences?.some((o) => o.kind === 'KubeadmControlPlane' && o.name === kcp.metadata.name && o.controller));
      const clusterName = mine[0]?.spec.clusterName ?? kcp.metadata.labels?.[LABEL_CLUSTER_NAME];
      if (!clusterName) continue;
      const want = await controlPlaneFailureDomains(w, ns, clusterName);
      // TPL-2: servers in their Machine's failure domain (whether or not the cluster has failure domains of its own).
      for (const m of mine) {
        const hm = m.spec.infrastructureRef?.name ? hcsMachines.get(`${ns}/${m.spec.infrastructureRef.name}`) : undefined;
        const sid = hm?.spec.serverId;
        const az = sid ? w.cloud.server(sid)?.availabilityZone : undefined;
        if (m.spec.failureDomain && az !== undefined && az !== m.spec.failureDomain) {
          out.push({ rule: 'TPL-2', key: `TPL-2/server-az/${sid}`, message: `server ${sid} of control plane Machine ${m.metadata.name} is in availability zone ${az}, but the Machine's spec.failureDomain is ${m.spec.failureDomain}`, refs: [m.metadata.name, sid!] });
        }
      }
      if (!want?.length) continue;
      const wantText = [...want].sort().join(', ');
      const cluster = await getShared<Cluster>(w.mgmt, { kind: 'Cluster', namespace: ns, name: clusterName });
      const hc = cluster?.spec.infrastructureRef?.kind === 'HCSCluster' ? await getShared<HCSCluster>(w.mgmt, { kind: 'HCSCluster', namespace: ns, name: cluster.spec.infrastructureRef.name }) : undefined;
      const published: [string, Record<string, { controlPlane?: boolean }> | undefined, boolean][] = [
        [`HCSCluster ${ns}/${hc?.metadata.name ?? '?'} status.failureDomains`, hc?.status?.failureDomains, !!hc?.status?.ready],
        [`Cluster ${ns}/${clusterName} status.failureDomains`, (cluster?.status as { failureDomains?: Record<string, { controlPlane?: boolean }> } | undefined)?.failureDomains, !!(cluster?.status as { failureDomains?: unknown } | undefined)?.failureDomains],
      ];
      for (const [what, fds, judged] of published) {
        const have = cpOf(fds).join(', ');
        if (judged && have !== wantText) out.push({ rule: 'KCP-2', key: `KCP-2/published/${what}/${have}`, message: `${what} names control plane failure domains [${have || 'none'}], expected [${wantText}]: the HCSCluster's spec.controlPlaneAvailabilityZones the cloud lists`, refs: [clusterName] });
      }
      const live = mine.filter((m) => !m.metadata.deletionTimestamp);
      for (const m of live) {
        if (!m.spec.failureDomain || !want.includes(m.spec.failureDomain)) {
          out.push({ rule: 'KCP-2', key: `KCP-2/placement/${m.metadata.name}/${m.spec.failureDomain ?? ''}`, message: `control plane Machine ${m.metadata.name} has spec.failureDomain ${m.spec.failureDomain ?? '(none)'}, expected one of [${wantText}] (KubeadmControlPlane ${key} places every machine in a failure domain of the cluster)`, refs: [m.metadata.name, kcp.metadata.name] });
        }
      }
      const v = (x: string | undefined): string => (x ?? '').replace(/^v?/, 'v');
      const atRest = live.length === mine.length && live.length === (kcp.spec.replicas ?? 1) && live.every((m) => v(m.spec.version) === v(kcp.spec.version));
      if (!atRest) continue;
      const counts = want.map((fd) => [fd, live.filter((m) => m.spec.failureDomain === fd).length] as const);
      const n = counts.map(([, c]) => c);
      if (Math.max(...n) - Math.min(...n) > 1) {
        const text = counts.map(([fd, c]) => `${fd}=${c}`).join(', ');
        out.push({ rule: 'KCP-2', key: `KCP-2/balance/${key}/${text}`, message: `KubeadmControlPlane ${key} at rest with ${live.length} machines placed ${text}: the failure domains differ by more than one machine (upstream places each new machine in the failure domain with the fewest and removes from the one with the most)`, refs: [kcp.metadata.name, ...live.map((m) => m.metadata.name)] });
      }
    }
    return out;
  }
}
