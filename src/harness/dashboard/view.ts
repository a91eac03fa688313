/**
 * What the dashboard shows, computed from the management cluster's store and
 * the fake cloud: one plain JSON view pushed to the page whenever a watch or
 * the event log says something changed (src/harness/dashboard/feed.ts).
 */
import type { MockHcs } from '../../../mock-hcs/src/index.js';
import type { Cluster, KubeadmControlPlane, Machine, MachineDeployment, MachineSet } from '../../product/api/capi.js';
import type { HCSMachineConfigPool } from '../../product/api/hcs.js';
import type { EventLog } from '../../core/events.js';
import type { EmbeddedStore } from '../../core/kube/embedded-store.js';
import type { KubeObject } from '../../core/kube/types.js';
import { timelineSvg } from '../report/html.js';
import { renderHostnames } from '../report/hostnames-svg.js';
import type { TimeStatus } from '../../world/facade/timecontrol.js';
import { whyWaiting, WHY_KINDS, type Stall } from '../status/why.js';
import { hostPicture } from './hosts.js';
import { META_PERSISTENT } from '../../product/api/metadata.js';

export interface ViewSources {
  mgmt: EmbeddedStore;
  cloud: MockHcs;
  events: EventLog;
  time: () => TimeStatus;
}

export interface DashboardView {
  time: TimeStatus;
  clusters: { namespace: string; name: string; phase: string; infrastructureReady: boolean; controlPlaneReady: boolean }[];
  controlPlanes: { namespace: string; name: string; cluster: string; replicas: number; ready: number; updated: number; version: string; initialized: boolean }[];
  machineDeployments: { namespace: string; name: string; cluster: string; replicas: number; ready: number; updated: number; phase: string; version: string }[];
  machineSets: { namespace: string; name: string; deployment: string; replicas: number; ready: number; available: number }[];
  machines: { namespace: string; name: string; cluster: string; owner: string; phase: string; node: string; providerID: string; version: string }[];
  pools: { namespace: string; name: string; entries: { hostname: string; ip: string; machine: string; disks: { slot: number; phase: string; volumeId: string; mountPath: string }[] }[] }[];
  servers: { id: string; name: string; status: string }[];
  volumes: { id: string; name: string; status: string; attachedTo: string; attachedToName: string; persistent: boolean }[];
  faults: { id: string; service: string; operation: string; effect: string; fired: number }[];
  timeline: string;
  /** The hostname view (the page's main picture) and what each row holds now. */
  hostnames: string;
  hosts: { pool: string; role: string; hostname: string; ip: string; status: string; machine: string; phase: string; version: string; disks: { slot: number; state: string; volume: string; server?: string }[] }[];
  /** "Why is it waiting?": every object not progressing (src/harness/status/why.ts). */
  why: Stall[];
}

/** Width of the hostname picture: the page's 1440 px less its margins. */
export const HOSTNAMES_WIDTH = 1400;

/** The stalls of the management cluster now (the page, `hcs-testbed status`). */
export function stallsOf(mgmt: EmbeddedStore): Stall[] {
  return whyWaiting(Object.fromEntries(WHY_KINDS.map((k) => [k, mgmt.listSync<KubeObject>(k)])));
}

const ns = (o: KubeObject): string => o.metadata.namespace ?? '';
const byName = <T extends { namespace: string; name: string }>(a: T, b: T): number => (a.namespace + '/' + a.name < b.namespace + '/' + b.name ? -1 : 1);

export function computeView(src: ViewSources): DashboardView {
  const { mgmt, cloud } = src;
  const time = src.time();
  const clusters = mgmt.listSync<Cluster>('Cluster').map((c) => ({
    namespace: ns(c),
    name: c.metadata.name,
    phase: c.status?.phase ?? '',
    infrastructureReady: !!c.status?.infrastructureReady,
    controlPlaneReady: !!c.status?.controlPlaneReady,
  }));
  const controlPlanes = mgmt.listSync<KubeadmControlPlane>('KubeadmControlPlane').map((k) => ({
    namespace: ns(k),
    name: k.metadata.name,
    cluster: k.metadata.labels?.['cluster.x-k8s.io/cluster-name'] ?? '',
    replicas: k.spec.replicas ?? 1,
    ready: k.status?.readyReplicas ?? 0,
    updated: k.status?.updatedReplicas ?? 0,
    version: k.spec.version,
    initialized: !!k.status?.initialized,
  }));
  const machineDeployments = mgmt.listSync<MachineDeployment>('MachineDeployment').map((md) => ({
    namespace: ns(md),
    name: md.metadata.name,
    cluster: md.spec.clusterName,
    replicas: md.spec.replicas ?? 1,
    ready: md.status?.readyReplicas ?? 0,
    updated: md.status?.updatedReplicas ?? 0,
    phase: md.status?.phase ?? '',
    version: md.spec.template.spec.version ?? '',
  }));
  const machineSets = mgmt.listSync<MachineSet>('MachineSet').map((ms) => ({
    namespace: ns(ms),
    name: ms.metadata.name,
    deployment: ms.metadata.labels?.['cluster.x-k8s.io/deployment-name'] ?? '',
    replicas: ms.spec.replicas ?? 1,
    ready: ms.status?.readyReplicas ?? 0,
    available: ms.status?.availableReplicas ?? 0,
  }));
  const machines = mgmt.listSync<Machine>('Machine').map((m) => {
    const owner = m.metadata.ownerReferences?.find((r) => r.controller) ?? m.metadata.ownerReferences?.[0];
    return {
      namespace: ns(m),
      name: m.metadata.name,
      cluster: m.spec.clusterName,
      owner: owner ? `${owner.kind}/${owner.name}` : '',
      phase: m.status?.phase ?? '',
      node: m.status?.nodeRef?.name ?? '',
      providerID: m.spec.providerID ?? '',
      version: m.spec.version ?? '',
    };
  });
  const pools = mgmt.listSync<HCSMachineConfigPool>('HCSMachineConfigPool').map((p) => ({
    namespace: ns(p),
    name: p.metadata.name,
    entries: p.spec.configs.map((c) => {
      const st = p.status?.entries?.find((e) => e.hostname === c.hostname);
      return {
        hostname: c.hostname,
        ip: c.networks.map((n) => n.ipAddress).join(', '),
        machine: st?.machine ?? '',
        disks: (c.persistentDisks ?? []).map((d) => {
          const ds = st?.persistentDisks?.find((x) => x.slot === d.slot);
          return { slot: d.slot, phase: ds?.phase ?? 'Pending', volumeId: ds?.volumeId ?? '', mountPath: d.mountPath };
        }),
      };
    }),
  }));
  const hv = cloud.hypervisor;
  const servers = hv.listServers().map((s) => ({ id: s.id, name: s.name, status: s.status })).sort((a, b) => (a.name < b.name ? -1 : 1));
  const serverName = new Map(servers.map((s) => [s.id, s.name]));
  const volumes = hv
    .listVolumes()
    .map((v) => ({ id: v.id, name: v.name, status: v.status, attachedTo: v.attachedTo ?? '', attachedToName: v.attachedTo ? (serverName.get(v.attachedTo) ?? v.attachedTo) : '', persistent: v.metadata[META_PERSISTENT] === 'true' }))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  const pic = hostPicture(mgmt, cloud, src.events.all(), time.now);
  const hosts = pic.pools.flatMap((p) => p.rows.map((r) => ({ pool: p.name, role: p.role, hostname: r.hostname, ip: r.ip, status: r.now.status, machine: r.now.machine ?? '', phase: r.now.phase ?? '', version: r.now.version ?? '', disks: r.now.disks })));
  const faults = cloud.faults.list().map((f) => ({ id: f.id, service: f.service, operation: f.operation, effect: f.effect.type, fired: f.fired ?? 0 }));
  return {
    time,
    clusters: clusters.sort(byName),
    controlPlanes: controlPlanes.sort(byName),
    machineDeployments: machineDeployments.sort(byName),
    machineSets: machineSets.sort(byName),
    machines: machines.sort(byName),
    pools: pools.sort(byName),
    servers,
    volumes,
    faults,
    timeline: timelineSvg(src.events.all(), { until: time.now, width: 1200 }),
    hostnames: renderHostnames(pic, HOSTNAMES_WIDTH).svg,
    hosts,
    why: stallsOf(mgmt),
  };
}
