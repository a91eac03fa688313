/**
 * What the dashboard shows, computed from the management cluster's store,
 * the workload clusters and the fake cloud: plain JSON data the page draws
 * itself (src/harness/dashboard/static/app.js). Every list is keyed (`id`), so
 * after the first view the page receives only what changed
 * (src/harness/dashboard/diff.ts, feed.ts).
 *
 * Top to bottom, as the page lays it out (issue 34): the stalls, pinned and
 * counted; the owner tree with its counts and one progress line per
 * rollout; the machines waiting for a pool entry; the workload clusters
 * (nodes, Kube-OVN); the hostnames by pool (history as data: spans with
 * start and end, an open span has no end, so a row changes only when
 * something happens to it); the tables.
 */
import type { MockHcs } from '../../../mock-hcs/src/index.js';
import type { Machine } from '../../product/api/capi.js';
import type { EventLog } from '../../core/events.js';
import type { EmbeddedStore } from '../../core/kube/embedded-store.js';
import type { KubeObject } from '../../core/kube/types.js';
import type { TimeStatus } from '../../world/facade/timecontrol.js';
import { stallSummary, whyWaiting, WHY_KINDS, type Stall } from '../status/why.js';
import { hostPicture } from './hosts.js';
import type { HostHistoryBuilder } from '../report/hostnames.js';
import { META_PERSISTENT } from '../../product/api/metadata.js';
import { ownerTree, type Rollout, type TreeNode, type WaitingMachine } from './tree.js';
import { appReleaseHistory, workloadViews, type AppReleaseView, type WorkloadNode, type WorkloadSource, type WorkloadView } from './workload-view.js';

export interface ViewSources {
  mgmt: EmbeddedStore;
  cloud: MockHcs;
  events: EventLog;
  time: () => TimeStatus;
  /** The workload clusters (their nodes and AppReleases); none without. */
  workloads?: WorkloadSource;
  /** The hostnames' history so far, fed the new events on each view (the feed keeps one); without: read from all events. */
  hostHistory?: HostHistoryBuilder;
}

export interface HostRowView {
  /** pool/hostname */
  id: string;
  pool: string;
  role: string;
  hostname: string;
  ip: string;
  status: 'serving' | 'free' | 'kept';
  machine: string;
  phase: string;
  version: string;
  disks: { slot: number; state: string; volume: string; server?: string }[];
  /** Machines that served it: [from, to (null: still serving), gone, phases [from, phase][]]. */
  spans: { machine: string; from: number; to: number | null; gone: boolean; phases: [number, string][] }[];
  /** The persistent disk's states: [from, to (null: now), state]. */
  diskSpans: [number, number | null, string][];
  faults: { t: number; message: string }[];
  /** Reasons of the stalls on the machine that holds it. */
  stalls: string[];
}

export interface PoolView {
  id: string;
  namespace: string;
  name: string;
  role: string;
  entries: number;
  serving: number;
  free: number;
  kept: number;
  running: number;
  notRunning: number;
  persistent: boolean;
}

export interface DashboardView {
  time: TimeStatus;
  /** The time axis of the hostname history: from the first event to a round end past now (it moves in steps, not on every update). */
  axis: { t0: number; t1: number };
  /** "Why is it waiting?": every object not progressing, with its advice. */
  why: (Stall & { id: string })[];
  /** The stalls counted by reason (the summary pinned on top). */
  whySummary: { id: string; reason: string; category: string; count: number; rules: string[] }[];
  tree: TreeNode[];
  rollouts: Rollout[];
  waiting: WaitingMachine[];
  workloads: WorkloadView[];
  nodes: WorkloadNode[];
  appReleases: AppReleaseView[];
  pools: PoolView[];
  hosts: HostRowView[];
  machines: { id: string; namespace: string; name: string; cluster: string; owner: string; phase: string; node: string; providerID: string; version: string }[];
  servers: { id: string; name: string; status: string }[];
  volumes: { id: string; name: string; status: string; attachedTo: string; attachedToName: string; persistent: boolean }[];
  faults: { id: string; service: string; operation: string; effect: string; fired: number }[];
}

/** The stalls of the management cluster now (the page, `hcs-testbed status`). */
export function stallsOf(mgmt: EmbeddedStore): Stall[] {
  return whyWaiting(Object.fromEntries(WHY_KINDS.map((k) => [k, mgmt.listSharedSync<KubeObject>(k)])));
}

const ns = (o: KubeObject): string => o.metadata.namespace ?? '';
const byName = <T extends { namespace: string; name: string }>(a: T, b: T): number => (a.namespace + '/' + a.name < b.namespace + '/' + b.name ? -1 : 1);

/** Axis ends in steps: the span from the first event grows to the next of these, so the picture rescales rarely. */
const AXIS_STEPS_MS = [15, 30, 60, 120, 180, 240, 360, 480, 720, 1440, 2880, 5760].map((m) => m * 60_000);

export function axisEnd(t0: number, now: number): number {
  const span = Math.max(1, now - t0);
  const step = AXIS_STEPS_MS.find((s) => s >= span * 1.02) ?? Math.ceil((span * 1.02) / AXIS_STEPS_MS.at(-1)!) * AXIS_STEPS_MS.at(-1)!;
  return t0 + step;
}

const open = (t: number, now: number): number | null => (t >= now || !Number.isFinite(t) ? null : t);

export function computeView(src: ViewSources): DashboardView {
  const { mgmt, cloud } = src;
  const time = src.time();
  const events = src.events.all();
  const why = stallsOf(mgmt);
  const { tree, rollouts, waiting } = ownerTree({ mgmt, cloud, stalls: why });
  const machines = mgmt.listSharedSync<Machine>('Machine').map((m) => {
    const owner = m.metadata.ownerReferences?.find((r) => r.controller) ?? m.metadata.ownerReferences?.[0];
    return {
      id: `${ns(m)}/${m.metadata.name}`,
      namespace: ns(m),
      name: m.metadata.name,
      cluster: m.spec.clusterName,
      owner: owner ? `${owner.kind}/${owner.name}` : '',
      phase: m.metadata.deletionTimestamp ? 'Deleting' : (m.status?.phase ?? ''),
      node: m.status?.nodeRef?.name ?? '',
      providerID: m.spec.providerID ?? '',
      version: m.spec.version ?? '',
    };
  });
  const hv = cloud.hypervisor;
  const servers = hv.listServers().map((s) => ({ id: s.id, name: s.name, status: s.status })).sort((a, b) => (a.name < b.name ? -1 : 1));
  const serverName = new Map(servers.map((s) => [s.id, s.name]));
  // The volumes table: the persistent disks (the ephemeral ones come and go with their server).
  const volumes = hv
    .listVolumes()
    .filter((v) => v.metadata[META_PERSISTENT] === 'true')
    .map((v) => ({ id: v.id, name: v.name, status: v.status, attachedTo: v.attachedTo ?? '', attachedToName: v.attachedTo ? (serverName.get(v.attachedTo) ?? v.attachedTo) : '', persistent: v.metadata[META_PERSISTENT] === 'true' }))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  // Open spans stay open (no end): a serving row changes only when its machine, phase or disk does.
  const pic = hostPicture(mgmt, cloud, events, Infinity, src.hostHistory);
  const stallByMachine = new Map<string, string[]>();
  for (const s of why) if (s.kind === 'HCSMachine') stallByMachine.set(s.name, [...(stallByMachine.get(s.name) ?? []), s.reason]);
  const pools: PoolView[] = [];
  const hosts: HostRowView[] = [];
  for (const p of pic.pools) {
    let running = 0;
    for (const r of p.rows) {
      const n = r.now;
      if (n.status === 'serving' && n.phase === 'Running') running++;
      hosts.push({
        id: `${p.name}/${r.hostname}`,
        pool: p.name,
        role: p.role,
        hostname: r.hostname,
        ip: r.ip,
        status: n.status,
        machine: n.machine ?? '',
        phase: n.phase ?? '',
        version: n.version ?? '',
        disks: n.disks,
        spans: r.history.machines.map((m) => ({ machine: m.machine, from: m.from, to: open(m.to, Infinity), gone: m.gone, phases: m.phases.map((x) => [x.from, x.phase] as [number, string]) })),
        diskSpans: r.history.disks.map((d) => [d.from, open(d.to, Infinity), d.state] as [number, number | null, string]),
        faults: r.history.faults,
        stalls: n.machine ? (stallByMachine.get(n.machine) ?? []) : [],
      });
    }
    const serving = p.rows.filter((r) => r.now.status === 'serving').length;
    const kept = p.rows.filter((r) => r.now.status === 'kept').length;
    pools.push({
      id: `${p.namespace}/${p.name}`,
      namespace: p.namespace,
      name: p.name,
      role: p.role,
      entries: p.rows.length,
      serving,
      kept,
      free: p.rows.length - serving - kept,
      running,
      notRunning: serving - running,
      persistent: p.rows.some((r) => r.history.disks.length > 0 || r.now.disks.length > 0),
    });
  }
  const faults = cloud.faults.list().map((f) => ({ id: f.id, service: f.service, operation: f.operation, effect: f.effect.type, fired: f.fired ?? 0 }));
  const t0 = events[0]?.t ?? time.now;
  return {
    time,
    axis: { t0, t1: axisEnd(t0, time.now) },
    why: why.map((s) => ({ id: `${s.kind}/${s.namespace}/${s.name}/${s.reason}`, ...s })),
    whySummary: stallSummary(why).map((x) => ({ id: x.reason, ...x })),
    tree,
    rollouts,
    waiting,
    ...(src.workloads ? workloadViews(src.workloads, appReleaseHistory(events)) : { workloads: [], nodes: [], appReleases: [] }),
    pools,
    hosts,
    machines: machines.sort(byName),
    servers,
    volumes,
    faults,
  };
}

/** What `hcs-testbed status` prints: every hostname now (no history) and the stalls. */
export function statusOf(v: DashboardView): { time: TimeStatus; hosts: Omit<HostRowView, 'id' | 'spans' | 'diskSpans' | 'faults' | 'stalls'>[]; why: Stall[] } {
  return {
    time: v.time,
    hosts: v.hosts.map((h) => ({ pool: h.pool, role: h.role, hostname: h.hostname, ip: h.ip, status: h.status, machine: h.machine, phase: h.phase, version: h.version, disks: h.disks })),
    why: v.why.map(({ id: _id, ...s }) => s),
  };
}
