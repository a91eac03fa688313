/**
 * Stranded data (DISK-8, MD-3), a continuous invariant: when a rollout or a
 * scale step has completed, every persistent disk that held data in service is
 * back in service on a live machine with its hostname — unless its pool entry
 * (or the slot) was removed, or the replicas were lowered, on purpose.
 *
 * "In service": attached to the server of a Running, live machine that holds
 * the disk's hostname (DISK-3: the identity of a disk is (hostname, slot)).
 * "Completed": every MachineDeployment and KubeadmControlPlane of the
 * namespace has its replicas updated and available, and no Machine is being
 * created or deleted (the same stability the MD-1 bounds use).
 *
 * At each completed instant two things are flagged:
 * - DISK-8: a live machine serves hostname H, but a disk of H that was in
 *   service before now sits `available` (not attached to H's server);
 * - MD-3: since the previous completed instant, a hostname H that held data
 *   was retired (no live machine serves it, its entry is still in the pool)
 *   while another machine took a fresh entry H' (one no machine ever served):
 *   the surge machine of a maxSurge > 0 rollout took another entry and other
 *   disks, and H's data stayed behind. Hostnames retired without a fresh one
 *   being taken are a scale-in (replicas lowered on purpose, MD-4) and pass.
 */
import type { HCSMachine, HCSMachineConfigPool } from '../../product/api/hcs.js';
import { persistentDiskIdentity } from '../../product/api/hcs.js';
import { LABEL_CONTROL_PLANE, LABEL_DEPLOYMENT_NAME, type KubeadmControlPlane, type Machine, type MachineDeployment } from '../../product/api/capi.js';
import { listShared } from '../../core/kube/client.js';
import type { StateSource } from './world.js';

export interface StrandedFinding {
  rule: 'DISK-8' | 'MD-3';
  key: string;
  message: string;
  refs: string[];
}

interface ServedDisk {
  volumeId: string;
  volumeName: string;
  slot: number;
}

/** namespace/pool/hostname */
type EntryKey = string;

export class StrandedDataTracker {
  /** Volumes seen in service, by id: the entry and slot they served. */
  private readonly inService = new Map<string, { entry: EntryKey; slot: number; name: string }>();
  /** Every entry a live Running machine ever served. */
  private readonly everServed = new Set<EntryKey>();
  /** Entries served at the previous completed instant, with the machine serving each. */
  private lastStable: Map<EntryKey, string> | undefined;

  constructor(
    private readonly world: StateSource,
    /** A loaded state (a replay): the entries served at the first check stand for the last completed instant. */
    private readonly opts: { baselineFirstSight?: boolean } = {},
  ) {}

  async findings(): Promise<StrandedFinding[]> {
    const w = this.world;
    const hcsMachines = await listShared<HCSMachine>(w.mgmt, 'HCSMachine');
    const machines = new Map((await listShared<Machine>(w.mgmt, 'Machine')).map((m) => [`${m.metadata.namespace}/${m.metadata.name}`, m]));
    const volumes = w.cloud.listVolumes();
    // Entries served now: a live HCSMachine with a hostname whose Machine is Running.
    const served = new Map<EntryKey, { machine: string; serverId?: string }>();
    for (const hm of hcsMachines) {
      const host = hm.status?.hostname;
      const pool = hm.spec.configPoolRef?.name;
      if (!host || !pool || hm.metadata.deletionTimestamp) continue;
      const m = machines.get(`${hm.metadata.namespace}/${hm.metadata.name}`);
      if (!m || m.metadata.deletionTimestamp || m.status?.phase !== 'Running') continue;
      served.set(`${hm.metadata.namespace}/${pool}/${host}`, { machine: hm.metadata.name, ...(hm.spec.serverId ? { serverId: hm.spec.serverId } : {}) });
    }
    const entryOfHost = new Map<string, EntryKey[]>();
    for (const k of served.keys()) {
      const host = k.split('/')[2]!;
      entryOfHost.set(host, [...(entryOfHost.get(host) ?? []), k]);
    }
    // Record what is in service now.
    for (const v of volumes) {
      const id = persistentDiskIdentity(v.metadata);
      if (!id || !v.attachedTo || v.status !== 'in-use') continue;
      for (const k of entryOfHost.get(id.hostname) ?? []) {
        if (served.get(k)!.serverId === v.attachedTo) this.inService.set(v.id, { entry: k, slot: id.slot, name: v.name });
      }
    }
    for (const k of served.keys()) this.everServed.add(k);

    if (!(await this.completed(machines))) {
      if (this.opts.baselineFirstSight && this.lastStable === undefined) {
        this.lastStable = new Map([...served].map(([k, x]) => [k, x.machine]));
        this.servedByLastStable = new Set(this.everServed);
      }
      return [];
    }
    const pools = await listShared<HCSMachineConfigPool>(w.mgmt, 'HCSMachineConfigPool');
    const declared = new Map<EntryKey, Set<number>>();
    for (const p of pools) {
      if (p.metadata.deletionTimestamp) continue;
      for (const c of p.spec.configs ?? []) declared.set(`${p.metadata.namespace}/${p.metadata.name}/${c.hostname}`, new Set((c.persistentDisks ?? []).map((d) => d.slot)));
    }
    const volById = new Map(volumes.map((v) => [v.id, v]));
    /** Disks of an entry that were in service and still exist, not attached now, with the slot still declared. */
    const leftBehind = (entry: EntryKey): ServedDisk[] => {
      const out: ServedDisk[] = [];
      for (const [vid, s] of this.inService) {
        if (s.entry !== entry || !declared.get(entry)?.has(s.slot)) continue;
        const v = volById.get(vid);
        if (v && v.status === 'available') out.push({ volumeId: vid, volumeName: s.name, slot: s.slot });
      }
      return out.sort((a, b) => a.slot - b.slot);
    };
    const out: StrandedFinding[] = [];
    const hostOf = (k: EntryKey): string => k.split('/')[2]!;
    const poolOf = (k: EntryKey): string => k.split('/').slice(0, 2).join('/');
    // DISK-8: a served hostname whose disk sits available with data.
    for (const [entry, s] of served) {
      for (const d of leftBehind(entry)) {
        out.push({
          rule: 'DISK-8',
          key: `DISK-8/stranded/${entry}/${d.slot}/${d.volumeId}/${s.machine}`,
          message: `stranded data: machine ${s.machine} serves hostname ${hostOf(entry)} (pool ${poolOf(entry)}), but its slot ${d.slot} volume ${d.volumeName} (${d.volumeId}), which held data in service, is available — not attached to it`,
          refs: [d.volumeId, s.machine],
        });
      }
    }
    // MD-3: an entry retired with data while another machine took a fresh entry.
    const prev = this.lastStable;
    const now = new Map([...served].map(([k, s]) => [k, s.machine]));
    if (prev) {
      const before = this.servedByLastStable;
      const fresh = [...now.keys()].filter((k) => !before.has(k));
      const retired = [...prev.keys()]
        .filter((k) => !now.has(k) && declared.has(k))
        .map((k) => ({ entry: k, disks: leftBehind(k) }))
        .filter((r) => r.disks.length > 0);
      const samePool = (k: EntryKey): EntryKey[] => fresh.filter((f) => poolOf(f) === poolOf(k));
      retired.forEach((r, i) => {
        const f = samePool(r.entry)[i];
        if (!f) return;
        for (const d of r.disks) {
          out.push({
            rule: 'MD-3',
            key: `MD-3/stranded/${r.entry}/${d.slot}/${d.volumeId}`,
            message:
              `stranded data: hostname ${hostOf(r.entry)} (pool ${poolOf(r.entry)}) was retired with its slot ${d.slot} volume ${d.volumeName} (${d.volumeId}) available and holding data, ` +
              `while machine ${now.get(f)} took the fresh entry ${hostOf(f)} (empty disks): a surge machine (maxSurge > 0) cannot take the entry of the machine it replaces`,
            refs: [d.volumeId, now.get(f)!, prev.get(r.entry)!],
          });
        }
      });
    }
    this.lastStable = now;
    this.servedByLastStable = new Set(this.everServed);
    return out;
  }

  /** Every entry served by the previous completed instant: an entry outside it is fresh (no machine ever served it). */
  private servedByLastStable = new Set<EntryKey>();

  /** Every MachineDeployment and KubeadmControlPlane rolled out and available; no Machine coming or going. */
  private async completed(machines: Map<string, Machine>): Promise<boolean> {
    if (machines.size === 0) return false;
    for (const m of machines.values()) if (m.metadata.deletionTimestamp || m.status?.phase !== 'Running') return false;
    const count = (ns: string | undefined, pred: (m: Machine) => boolean): number => {
      let n = 0;
      for (const m of machines.values()) if (m.metadata.namespace === ns && pred(m)) n++;
      return n;
    };
    for (const md of await listShared<MachineDeployment>(this.world.mgmt, 'MachineDeployment')) {
      const r = md.spec.replicas ?? 1;
      const st = md.status;
      // The status can lag behind the machines: count them too (old and new MachineSets together).
      if (count(md.metadata.namespace, (m) => m.metadata.labels?.[LABEL_DEPLOYMENT_NAME] === md.metadata.name) !== r) return false;
      if (md.metadata.deletionTimestamp || (st?.observedGeneration ?? 0) < (md.metadata.generation ?? 0) || st?.replicas !== r || st.updatedReplicas !== r || st.availableReplicas !== r) return false;
    }
    for (const kcp of await listShared<KubeadmControlPlane>(this.world.mgmt, 'KubeadmControlPlane')) {
      const r = kcp.spec.replicas ?? 1;
      const st = kcp.status;
      const cluster = kcp.metadata.labels?.['cluster.x-k8s.io/cluster-name'];
      if (count(kcp.metadata.namespace, (m) => m.metadata.labels?.[LABEL_CONTROL_PLANE] !== undefined && (!cluster || m.spec.clusterName === cluster)) !== r) return false;
      if (kcp.metadata.deletionTimestamp || st?.replicas !== r || (st.updatedReplicas ?? r) !== r || (st.readyReplicas ?? r) !== r) return false;
    }
    return true;
  }
}
