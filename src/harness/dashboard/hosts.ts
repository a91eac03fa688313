/**
 * The dashboard's hostname view (src/harness/report/hostnames-svg.ts) from the live
 * testbed: the pools' entries and status (POOL-5), the Machines (phase,
 * version), the cloud's persistent volumes (DISK-3 identity) for "now", and
 * the event log for the history.
 */
import type { MockHcs } from '../../../mock-hcs/src/index.js';
import type { Machine } from '../../product/api/capi.js';
import { persistentDiskIdentity, type HCSMachineConfigPool } from '../../product/api/hcs.js';
import type { LogEvent } from '../../core/events.js';
import type { EmbeddedStore } from '../../core/kube/embedded-store.js';
import { hostHistories, type HostHistoryBuilder } from '../report/hostnames.js';
import type { HostNow, HostPicture, HostPool } from '../report/hostnames-svg.js';

/** What each hostname holds now, plus its history: the data behind the picture (also sent to the page as JSON). */
export function hostPicture(mgmt: EmbeddedStore, cloud: MockHcs, events: readonly LogEvent[], now: number, builder?: HostHistoryBuilder): HostPicture {
  // With a builder (the live feed keeps one), only the events since the last picture are read.
  if (builder) builder.addAll(events);
  const hist = builder ? builder.snapshot(now) : hostHistories(events, now);
  const machines = new Map(mgmt.listSharedSync<Machine>('Machine').map((m) => [m.metadata.name, m]));
  const hv = cloud.hypervisor;
  const serverName = new Map(hv.listServers().map((s) => [s.id, s.name]));
  /** hostname → its persistent volumes now. */
  const volsOf = new Map<string, HostNow['disks']>();
  for (const v of hv.listVolumes()) {
    const id = persistentDiskIdentity(v.metadata);
    if (!id || v.status === 'deleted') continue;
    const list = volsOf.get(id.hostname) ?? [];
    list.push({ slot: id.slot, state: v.status, volume: v.name, ...(v.attachedTo ? { server: serverName.get(v.attachedTo) ?? v.attachedTo } : {}) });
    volsOf.set(id.hostname, list);
  }
  const pools: HostPool[] = mgmt.listSharedSync<HCSMachineConfigPool>('HCSMachineConfigPool').map((p) => {
    const rows = p.spec.configs.map((c) => {
      const st = p.status?.entries?.find((e) => e.hostname === c.hostname);
      const m = st?.machine ? machines.get(st.machine) : undefined;
      const disks = (volsOf.get(c.hostname) ?? []).sort((a, b) => a.slot - b.slot);
      const now: HostNow = st?.machine
        ? { status: 'serving', machine: st.machine, phase: m?.status?.phase ?? (m ? 'Pending' : 'Deleted'), version: m?.spec.version ?? '', disks }
        : { status: disks.length ? 'kept' : 'free', disks };
      return { hostname: c.hostname, ip: c.networks.map((n) => n.ipAddress).join(', '), now, history: hist.get(c.hostname) ?? { hostname: c.hostname, machines: [], disks: [], faults: [] } };
    });
    const cp = rows.some((r) => {
      const names = [...r.history.machines.map((s) => s.machine), ...(r.now.machine ? [r.now.machine] : [])];
      return names.some((n) => machines.get(n)?.metadata.labels?.['cluster.x-k8s.io/control-plane'] !== undefined || machines.get(n)?.metadata.ownerReferences?.some((o) => o.kind === 'KubeadmControlPlane'));
    });
    return { namespace: p.metadata.namespace ?? '', name: p.metadata.name, role: cp ? 'control plane' : 'workers', rows };
  });
  pools.sort((a, b) => (a.role === b.role ? (a.name < b.name ? -1 : 1) : a.role === 'control plane' ? -1 : 1));
  return { pools, t0: events[0]?.t ?? now, t1: now };
}
