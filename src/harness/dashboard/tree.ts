/**
 * The owner tree of the dashboard (issue 34), as `clusterctl describe
 * cluster` and cluster-api-visualizer draw it: Cluster → KubeadmControlPlane
 * / MachineDeployment → old and new MachineSets (desired, current, updated,
 * ready) → Machines → HCSMachine → server and persistent disks; one progress
 * line per rollout ("worker rollout: 1/3 updated, maxSurge 0, maxUnavailable
 * 1"), and the machines that wait for a pool entry (no hostname yet: no row
 * in the hostname view, so they get a lane of their own).
 *
 * Plain data, one item per object with a stable `id`, so the page receives
 * only the items that changed (src/harness/dashboard/diff.ts).
 */
import type { MockHcs } from '../../../mock-hcs/src/index.js';
import { ANNOTATION_REVISION, LABEL_CONTROL_PLANE, LABEL_DEPLOYMENT_NAME, type Cluster, type Condition, type KubeadmControlPlane, type Machine, type MachineDeployment, type MachineSet } from '../../product/api/capi.js';
import { persistentDiskIdentity, type HCSMachine } from '../../product/api/hcs.js';
import { maxSurge, maxUnavailable } from '../../product/api/rolling-update.js';
import type { EmbeddedStore } from '../../core/kube/embedded-store.js';
import type { Stall } from '../status/why.js';

export interface Counts {
  desired: number;
  current: number;
  updated: number;
  ready: number;
}

export interface TreeMachine {
  name: string;
  phase: string;
  version: string;
  deleting: boolean;
  node: string;
  /** The HCSMachine (same name): its pool entry, readiness and the reason it is not ready. */
  hostname: string;
  infraReady: boolean;
  infraReason: string;
  server: string;
  serverStatus: string;
  disks: { slot: number; state: string }[];
}

export interface TreeNode {
  /** kind/namespace/name: stable across updates. */
  id: string;
  parent: string;
  depth: number;
  kind: 'Cluster' | 'KubeadmControlPlane' | 'MachineDeployment' | 'MachineSet' | 'Machine';
  namespace: string;
  name: string;
  /** Phase (Cluster, MachineDeployment, Machine). */
  phase: string;
  version: string;
  counts?: Counts;
  /** MachineSet: the one the MachineDeployment rolls to, or one it rolls away from. */
  role?: 'new' | 'old';
  machine?: TreeMachine;
  /** Stalls on this object (their reasons): marked in the tree. */
  stalls: string[];
}

export interface Rollout {
  id: string;
  kind: 'KubeadmControlPlane' | 'MachineDeployment';
  namespace: string;
  name: string;
  /** The progress line, as an audience reads it. */
  text: string;
  state: 'rolling' | 'done' | 'held' | 'scaling';
  counts: Counts;
  maxSurge: number;
  maxUnavailable: number;
  version: string;
}

export interface WaitingMachine {
  id: string;
  namespace: string;
  name: string;
  owner: string;
  phase: string;
  pool: string;
  reason: string;
  summary: string;
  advice: string;
  fix?: Stall['fix'];
  rules: string[];
  since: string;
}

const ns = (o: { metadata: { namespace?: string } }): string => o.metadata.namespace ?? '';
const idOf = (kind: string, o: { metadata: { namespace?: string; name: string } }): string => `${kind}/${ns(o)}/${o.metadata.name}`;
const byName = <T extends { metadata: { name: string } }>(a: T, b: T): number => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0);
const cond = (cs: Condition[] | undefined, type: string): Condition | undefined => cs?.find((c) => c.type === type);

/** KCP maxSurge as its controller reads it: 0 or 1, default 1 (upstream KubeadmControlPlane rolloutStrategy). */
export function kcpMaxSurge(k: KubeadmControlPlane): number {
  return Math.min(1, Math.max(0, Number(k.spec.rolloutStrategy?.rollingUpdate?.maxSurge ?? 1) || 0));
}

export interface TreeInput {
  mgmt: EmbeddedStore;
  cloud: MockHcs;
  stalls: readonly Stall[];
}

export interface TreeParts {
  tree: TreeNode[];
  rollouts: Rollout[];
  waiting: WaitingMachine[];
}

/** The owner tree, the rollouts' progress lines and the machines waiting for a pool entry. */
export function ownerTree(src: TreeInput): TreeParts {
  const { mgmt, cloud } = src;
  const clusters = mgmt.listSharedSync<Cluster>('Cluster').sort(byName);
  const kcps = mgmt.listSharedSync<KubeadmControlPlane>('KubeadmControlPlane').sort(byName);
  const mds = mgmt.listSharedSync<MachineDeployment>('MachineDeployment').sort(byName);
  const mss = mgmt.listSharedSync<MachineSet>('MachineSet').sort(byName);
  const machines = mgmt.listSharedSync<Machine>('Machine').sort(byName);
  const hcsMachines = new Map(mgmt.listSharedSync<HCSMachine>('HCSMachine').map((h) => [`${ns(h)}/${h.metadata.name}`, h]));
  const hv = cloud.hypervisor;
  const servers = new Map(hv.listServers().map((s) => [s.id, s]));
  const disksOf = new Map<string, { slot: number; state: string }[]>();
  for (const v of hv.listVolumes()) {
    const id = persistentDiskIdentity(v.metadata);
    if (!id || v.status === 'deleted') continue;
    disksOf.set(id.hostname, [...(disksOf.get(id.hostname) ?? []), { slot: id.slot, state: v.status }].sort((a, b) => a.slot - b.slot));
  }
  const stallsOf = new Map<string, string[]>();
  for (const s of src.stalls) {
    // An HCSMachine's stall shows on its Machine (same name).
    const key = `${s.kind === 'HCSMachine' ? 'Machine' : s.kind}/${s.namespace}/${s.name}`;
    stallsOf.set(key, [...(stallsOf.get(key) ?? []), s.reason]);
  }
  const tree: TreeNode[] = [];
  const rollouts: Rollout[] = [];
  const node = (kind: TreeNode['kind'], o: { metadata: { namespace?: string; name: string } }, parent: string, depth: number, rest: Partial<TreeNode>): TreeNode => {
    const id = idOf(kind, o);
    const n: TreeNode = { id, parent, depth, kind, namespace: ns(o), name: o.metadata.name, phase: '', version: '', stalls: stallsOf.get(id) ?? [], ...rest };
    tree.push(n);
    return n;
  };
  const machineNode = (m: Machine, parent: string, depth: number): void => {
    const h = hcsMachines.get(`${ns(m)}/${m.metadata.name}`);
    const srv = h?.spec.serverId ? servers.get(h.spec.serverId) : undefined;
    const ready = cond(h?.status?.conditions, 'Ready');
    const hostname = h?.status?.hostname ?? '';
    node('Machine', m, parent, depth, {
      phase: m.metadata.deletionTimestamp ? 'Deleting' : (m.status?.phase ?? 'Pending'),
      version: m.spec.version ?? '',
      machine: {
        name: m.metadata.name,
        phase: m.status?.phase ?? 'Pending',
        version: m.spec.version ?? '',
        deleting: !!m.metadata.deletionTimestamp,
        node: m.status?.nodeRef?.name ?? '',
        hostname,
        infraReady: !!h?.status?.ready,
        infraReason: ready && ready.status !== 'True' ? (ready.reason ?? '') : '',
        server: srv?.name ?? '',
        serverStatus: srv?.status ?? (h?.status?.serverStatus ?? ''),
        disks: hostname ? (disksOf.get(hostname) ?? []) : [],
      },
    });
  };
  const ownedBy = (o: { metadata: { ownerReferences?: { kind: string; name: string; controller?: boolean }[] } }, kind: string, name: string): boolean =>
    !!o.metadata.ownerReferences?.some((r) => r.kind === kind && r.name === name);
  for (const c of clusters) {
    const cid = idOf('Cluster', c);
    node('Cluster', c, '', 0, { phase: c.status?.phase ?? '' });
    const inCluster = <T extends { metadata: { namespace?: string; labels?: Record<string, string> } }>(o: T, clusterName: string | undefined): boolean => ns(o) === ns(c) && (clusterName ?? o.metadata.labels?.['cluster.x-k8s.io/cluster-name']) === c.metadata.name;
    for (const k of kcps.filter((k) => ns(k) === ns(c) && (c.spec.controlPlaneRef?.name === k.metadata.name || k.metadata.labels?.['cluster.x-k8s.io/cluster-name'] === c.metadata.name))) {
      const kid = idOf('KubeadmControlPlane', k);
      const own = machines.filter((m) => ns(m) === ns(k) && ownedBy(m, 'KubeadmControlPlane', k.metadata.name));
      const counts: Counts = { desired: k.spec.replicas ?? 1, current: k.status?.replicas ?? own.length, updated: k.status?.updatedReplicas ?? 0, ready: k.status?.readyReplicas ?? 0 };
      node('KubeadmControlPlane', k, cid, 1, { version: k.spec.version, counts });
      for (const m of own) machineNode(m, kid, 2);
      rollouts.push(kcpRollout(k, counts, own, stallsOf.get(kid) ?? []));
    }
    for (const md of mds.filter((d) => inCluster(d, d.spec.clusterName))) {
      const did = idOf('MachineDeployment', md);
      const sets = mss.filter((s) => ns(s) === ns(md) && (ownedBy(s, 'MachineDeployment', md.metadata.name) || s.metadata.labels?.[LABEL_DEPLOYMENT_NAME] === md.metadata.name));
      const newest = newMachineSet(md, sets);
      const counts: Counts = { desired: md.spec.replicas ?? 1, current: md.status?.replicas ?? 0, updated: md.status?.updatedReplicas ?? 0, ready: md.status?.readyReplicas ?? 0 };
      node('MachineDeployment', md, cid, 1, { phase: md.status?.phase ?? '', version: md.spec.template.spec.version ?? '', counts });
      // The new MachineSet first, then the old ones (the ones the rollout drains).
      const ordered = [...sets.filter((s) => s === newest), ...sets.filter((s) => s !== newest)];
      for (const s of ordered) {
        const sid = idOf('MachineSet', s);
        const own = machines.filter((m) => ns(m) === ns(s) && ownedBy(m, 'MachineSet', s.metadata.name));
        const isNew = s === newest;
        // An old MachineSet scaled to 0 with no machine left is history (kept for rollbacks, revisionHistoryLimit): not drawn.
        if (!isNew && own.length === 0 && (s.spec.replicas ?? 0) === 0 && (s.status?.replicas ?? 0) === 0) continue;
        node('MachineSet', s, did, 2, { version: s.spec.template.spec.version ?? '', role: isNew ? 'new' : 'old', counts: { desired: s.spec.replicas ?? 0, current: s.status?.replicas ?? own.length, updated: isNew ? (s.status?.replicas ?? own.length) : 0, ready: s.status?.readyReplicas ?? 0 } });
        for (const m of own) machineNode(m, sid, 3);
      }
      rollouts.push(mdRollout(md, counts, sets, newest, [did, ...sets.map((s) => idOf('MachineSet', s))].flatMap((id) => stallsOf.get(id) ?? []), machines.filter((m) => m.metadata.labels?.[LABEL_DEPLOYMENT_NAME] === md.metadata.name).flatMap((m) => stallsOf.get(idOf('Machine', m)) ?? [])));
    }
  }
  // Machines whose HCSMachine holds no pool entry yet (waiting for one): no hostname row shows them.
  const waiting: WaitingMachine[] = [];
  for (const m of machines) {
    if (m.metadata.deletionTimestamp) continue;
    const h = hcsMachines.get(`${ns(m)}/${m.metadata.name}`);
    if (!h || h.status?.hostname) continue;
    const stall = src.stalls.find((s) => s.kind === 'HCSMachine' && s.name === m.metadata.name && s.namespace === ns(m));
    const pb = cond(h.status?.conditions, 'PoolEntryBound');
    const owner = m.metadata.labels?.[LABEL_DEPLOYMENT_NAME] ? `MachineDeployment ${m.metadata.labels[LABEL_DEPLOYMENT_NAME]}` : m.metadata.labels?.[LABEL_CONTROL_PLANE] !== undefined ? `KubeadmControlPlane ${m.metadata.labels?.['cluster.x-k8s.io/control-plane-name'] ?? ''}` : '';
    // Only those that wait for an entry (a stall, or the PoolEntryBound condition False): a brand-new machine binds at once.
    if (!stall && pb?.status !== 'False') continue;
    waiting.push({
      id: idOf('Machine', m),
      namespace: ns(m),
      name: m.metadata.name,
      owner,
      phase: m.status?.phase ?? 'Pending',
      pool: h.spec.configPoolRef?.name ?? '',
      reason: stall?.reason ?? pb?.reason ?? '',
      summary: stall?.summary ?? pb?.message ?? 'waiting for a free pool entry',
      advice: stall?.advice ?? '',
      ...(stall ? { fix: stall.fix } : {}),
      rules: stall?.rules ?? [],
      since: pb?.lastTransitionTime ?? m.metadata.creationTimestamp ?? '',
    });
  }
  return { tree, rollouts, waiting };
}

/** The MachineSet a MachineDeployment rolls to: the highest revision annotation (mdutil.FindNewMachineSet), else the one matching its template. */
function newMachineSet(md: MachineDeployment, sets: MachineSet[]): MachineSet | undefined {
  const rev = (s: MachineSet): number => Number(s.metadata.annotations?.[ANNOTATION_REVISION] ?? 0);
  const same = sets.filter((s) => s.spec.template.spec.infrastructureRef?.name === md.spec.template.spec.infrastructureRef?.name && (s.spec.template.spec.version ?? '') === (md.spec.template.spec.version ?? ''));
  return (same.length ? same : sets).sort((a, b) => rev(b) - rev(a))[0];
}

function heldText(stalls: string[]): string {
  if (stalls.includes('NoFreePoolEntry')) return 'held: a machine waits for a free pool entry (the lane "Waiting for a pool entry")';
  if (stalls.includes('PreflightCheckFailed')) return 'held by the MachineSet preflight checks: the control plane first (UPG-1)';
  if (stalls.length) return `held: ${[...new Set(stalls)].join(', ')}`;
  return '';
}

function mdRollout(md: MachineDeployment, counts: Counts, sets: MachineSet[], newest: MachineSet | undefined, ownStalls: string[], machineStalls: string[]): Rollout {
  const surge = maxSurge(md);
  const unavail = maxUnavailable(md);
  const oldLeft = sets.filter((s) => s !== newest).reduce((n, s) => n + (s.status?.replicas ?? 0), 0);
  const rolling = oldLeft > 0 || counts.updated < counts.desired;
  const scaling = !rolling && (counts.current !== counts.desired || counts.ready < counts.desired);
  const held = heldText([...ownStalls, ...machineStalls]);
  const state: Rollout['state'] = held ? 'held' : rolling ? 'rolling' : scaling ? 'scaling' : 'done';
  const what = `worker rollout ${md.metadata.name}`;
  const head = `${what}: ${counts.updated}/${counts.desired} updated, ${counts.ready} ready, ${counts.current} current, maxSurge ${surge}, maxUnavailable ${unavail}`;
  const to = `${md.spec.template.spec.infrastructureRef?.name ?? ''} (${md.spec.template.spec.version ?? ''})`;
  const tail = state === 'done' ? ` — up to date: ${to}` : state === 'held' ? ` — ${held}` : state === 'scaling' ? ` — scaling to ${counts.desired}` : ` — rolling to ${to}${oldLeft ? `, ${oldLeft} old left` : ''}`;
  return { id: `MachineDeployment/${ns(md)}/${md.metadata.name}`, kind: 'MachineDeployment', namespace: ns(md), name: md.metadata.name, text: head + tail, state, counts, maxSurge: surge, maxUnavailable: unavail, version: md.spec.template.spec.version ?? '' };
}

function kcpRollout(k: KubeadmControlPlane, counts: Counts, own: Machine[], stalls: string[]): Rollout {
  const surge = kcpMaxSurge(k);
  const rolling = counts.updated < counts.desired || own.some((m) => m.metadata.deletionTimestamp) || counts.current !== counts.desired;
  const held = heldText(stalls);
  const state: Rollout['state'] = held ? 'held' : rolling ? 'rolling' : counts.ready < counts.desired ? 'scaling' : 'done';
  const head = `control plane rollout ${k.metadata.name}: ${counts.updated}/${counts.desired} updated, ${counts.ready} ready, ${counts.current} current, maxSurge ${surge}${surge === 0 ? ' (remove first, KCP-1)' : ''}`;
  const to = `${k.spec.machineTemplate.infrastructureRef?.name ?? ''} (${k.spec.version})`;
  const tail = state === 'done' ? ` — up to date: ${to}` : state === 'held' ? ` — ${held}` : ` — rolling to ${to}`;
  return { id: `KubeadmControlPlane/${ns(k)}/${k.metadata.name}`, kind: 'KubeadmControlPlane', namespace: ns(k), name: k.metadata.name, text: head + tail, state, counts, maxSurge: surge, maxUnavailable: surge === 0 ? 1 : 0, version: k.spec.version };
}
