/**
 * MD-3: pool-managed persistent disks and maxSurge > 0 do not mix. A surge
 * machine is created while the machine it replaces still holds its pool
 * entry, so it either waits for a free entry or takes another entry — and
 * therefore another hostname, other IPs and other persistent disks than the
 * machine it replaces. The provider cannot prevent it (Cluster API decides
 * when machines are created) but flags it: a Warning event and a condition on
 * the HCSMachine, citing MD-3.
 */
import { LABEL_DEPLOYMENT_NAME, LABEL_SET_NAME, type KubeadmControlPlane, type Machine, type MachineDeployment } from '../api/capi.js';
import type { HCSMachineConfigPool } from '../api/hcs.js';
import { maxSurge as mdMaxSurge } from '../api/rolling-update.js';
import { getShared, listShared, type KubeClient } from '../../core/kube/client.js';

const LABEL_CONTROL_PLANE_NAME = 'cluster.x-k8s.io/control-plane-name';

export const COND_DISK_REUSE = 'PersistentDiskReuse';

export interface SurgeContext {
  /** "MachineDeployment demo-md-0" / "KubeadmControlPlane demo-control-plane". */
  owner: string;
  /** Resolved maxSurge (MD-1: percentages of replicas, rounded up). */
  maxSurge: number;
  /** Pool entries (hostnames) still held by the machines being replaced. */
  heldByReplaced: string[];
}

/**
 * The rollout context of a machine whose owner rolls out with maxSurge > 0
 * while machines it replaces still hold entries of `pool`; undefined when
 * MD-3 does not apply (maxSurge 0, no rollout in progress, or no persistent
 * disks in the pool).
 */
export async function surgeContext(mgmt: KubeClient, machine: Machine, pool: HCSMachineConfigPool): Promise<SurgeContext | undefined> {
  if (!pool.spec.configs.some((c) => (c.persistentDisks ?? []).length > 0)) return undefined;
  const ns = machine.metadata.namespace ?? 'default';
  const labels = machine.metadata.labels ?? {};
  // Read-only: shared reads, and the O(entries) holder map only once MD-3 can apply (maxSurge > 0).
  const holderMap = (): Map<string, string> => {
    const holders = new Map<string, string>();
    for (const e of pool.status?.entries ?? []) if (e.machine) holders.set(e.machine, e.hostname);
    return holders;
  };
  const mdName = labels[LABEL_DEPLOYMENT_NAME];
  if (mdName) {
    const md = await getShared<MachineDeployment>(mgmt, { kind: 'MachineDeployment', namespace: ns, name: mdName });
    const surge = md ? mdMaxSurge(md as MachineDeployment) : 0;
    if (!md || surge <= 0) return undefined;
    const holders = holderMap();
    const mine = labels[LABEL_SET_NAME];
    const peers = await listShared<Machine>(mgmt, 'Machine', { namespace: ns, labelSelector: { [LABEL_DEPLOYMENT_NAME]: mdName } });
    const held = peers.filter((m) => m.metadata.labels?.[LABEL_SET_NAME] !== mine && holders.has(m.metadata.name)).map((m) => holders.get(m.metadata.name)!);
    return held.length ? { owner: `MachineDeployment ${mdName}`, maxSurge: surge, heldByReplaced: held.sort() } : undefined;
  }
  const kcpName = labels[LABEL_CONTROL_PLANE_NAME];
  if (kcpName) {
    const kcp = await mgmt.get<KubeadmControlPlane>({ kind: 'KubeadmControlPlane', namespace: ns, name: kcpName });
    const raw = kcp?.spec.rolloutStrategy?.rollingUpdate?.maxSurge;
    // As the KCP controller reads it: 0 or 1, default 1.
    const surge = kcp ? Math.min(1, Math.max(0, Number(raw ?? 1) || 0)) : 0;
    if (!kcp || surge <= 0) return undefined;
    const holders = holderMap();
    const peers = await mgmt.list<Machine>('Machine', { namespace: ns, labelSelector: { [LABEL_CONTROL_PLANE_NAME]: kcpName } });
    // A surge is in progress when the control plane has more machines than replicas.
    if (peers.length <= (kcp.spec.replicas ?? 1)) return undefined;
    const held = peers.filter((m) => m.metadata.name !== machine.metadata.name && holders.has(m.metadata.name)).map((m) => holders.get(m.metadata.name)!);
    return held.length ? { owner: `KubeadmControlPlane ${kcpName}`, maxSurge: surge, heldByReplaced: held.sort() } : undefined;
  }
  return undefined;
}

export function surgeMessage(sc: SurgeContext, what: string): string {
  return (
    `MD-3: ${sc.owner} rolls out with maxSurge ${sc.maxSurge} > 0 while the machines it replaces still hold pool entries ` +
    `${sc.heldByReplaced.join(', ')} and their persistent disks; ${what}. Use maxSurge: 0 with pool-managed persistent disks ` +
    `(remove first, then replace on the same hostname and disks, MD-2/KCP-1)`
  );
}
