/**
 * "Why is it waiting?" (issue 25, OPS-2): every object that is not
 * progressing, with the reason read from its status conditions, named for
 * what an operator sees, with the SPEC rule that applies. One module for the
 * dashboard's panel (src/harness/dashboard/view.ts), `hcs-testbed status`
 * (src/harness/cli/status.ts) and the scenario runner's failure output
 * (src/harness/scenario/explain.ts).
 *
 * Only conditions are read, never invented Events: a MachineSet held by
 * Cluster API's preflight checks has no Event upstream, only
 * `MachinesCreated=False, reason PreflightCheckFailed` with the failed
 * checks' messages (cluster-api internal/controllers/machineset
 * machineset_preflight.go; kubernetes-sigs/cluster-api docs
 * "MachineSet Preflight Checks"); the check names are taken from those
 * messages (`"KubernetesVersionSkew" preflight check failed`).
 *
 * What counts as a stall (a condition False with one of these reasons):
 * - MachineSet MachinesCreated PreflightCheckFailed (UPG-1; UPG-3 for skew);
 * - KubeadmControlPlane Resized PreflightChecksFailed when a member's etcd is
 *   unhealthy, EtcdClusterHealthy EtcdClusterUnhealthy when etcd has lost
 *   quorum or a member reports errors (KCP-5). A rollout's own moments are
 *   not: a new member without its Node yet, "2/3 etcd members healthy" while
 *   the third joins (quorum kept) — a healthy rollout is never a fault;
 * - HCSMachine: NoFreePoolEntry (POOL-2), DiskDetachStuck / DiskDetachFailed
 *   (DISK-9), DiskAttachStuck (DISK-3), ImageNotFound (TPL-6), QuotaExceeded,
 *   InsufficientCapacity (OPS-2), invalid flavor / zone (TPL-2), addresses
 *   (NET-7), credentials (HCS-5), a build stuck or failed, a surge machine on
 *   another entry (MD-3);
 * - any other condition False with severity Error or Warning on these kinds.
 * Progress (provisioning, deleting, draining, a detach under its stuck limit,
 * any WaitingFor… reason: an earlier step not done yet) is not a stall.
 *
 * Each stall carries `advice`: the fix an operator can see without hovering,
 * right for the object's pool. A machine waiting for a pool entry in a pool
 * with persistent disks while its owner surges (maxSurge > 0, MD-3) is told
 * to use maxSurge 0: adding an entry would start it on a new hostname and let
 * each later replacement take the entry, and so the data, freed by another
 * machine. "Add an entry" is the advice only where no data can move (a scale
 * up, POOL-3, or a pool without persistent disks).
 */
import type { KubeObject } from '../../core/kube/types.js';

export type StallCategory = 'preflight' | 'pool' | 'disk' | 'image' | 'quota' | 'capacity' | 'etcd' | 'template' | 'network' | 'cloud' | 'rollout' | 'other';

export interface Stall {
  kind: string;
  namespace: string;
  name: string;
  category: StallCategory;
  /** The condition and its reason, as `kubectl describe` shows them. */
  condition: string;
  reason: string;
  /** One line for an audience. */
  summary: string;
  /** The condition's message, as written. */
  message: string;
  /** Cluster API preflight check names (MachineSet, KCP). */
  checks: string[];
  /** SPEC rule IDs that apply. */
  rules: string[];
  /** The pool entry of an HCSMachine, where it has one. */
  hostname?: string;
  /** The visible fix, right for the object's pool and owner (why, with the rule): fix, command and why in one text. */
  advice: string;
  /** The same in parts, for the page: what to do, the command that does it, and why. */
  fix: { what: string; command?: string; why?: string };
}

interface Cond {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  severity?: string;
}

type WithConds = KubeObject & { status?: { conditions?: Cond[]; hostname?: string } };

/** The objects to read, by kind (a store snapshot). */
export type ObjectsByKind = Partial<Record<string, readonly KubeObject[]>>;

/** The kinds whose conditions are read for stalls. */
export const STALL_KINDS = ['Cluster', 'HCSCluster', 'KubeadmControlPlane', 'MachineDeployment', 'MachineSet', 'HCSMachine'] as const;
/** Every kind whyWaiting reads: the stall kinds and the context the advice needs (pools, machines). */
export const WHY_KINDS = [...STALL_KINDS, 'HCSMachineConfigPool', 'Machine'] as const;

/** What the advice of one stall needs to know about the object's surroundings. */
export interface StallContext {
  /** The HCSMachine's pool has entries with persistent disks. */
  persistentPool?: boolean;
  /** The machine's owner: "MachineDeployment demo-md-0" / "KubeadmControlPlane demo-control-plane". */
  owner?: { kind: 'MachineDeployment' | 'KubeadmControlPlane'; name: string; namespace: string };
}

interface Known {
  category: StallCategory;
  rules: string[];
  summary: (o: WithConds, c: Cond, checks: string[], x: StallContext) => string;
  advice?: (o: WithConds, c: Cond, checks: string[], x: StallContext) => Stall['fix'];
  /** A condition with this reason that is only a moment of a healthy rollout (not a stall). */
  progress?: (c: Cond) => boolean;
}

/** The message names MD-3: the provider found a surge machine of a rollout (src/product/provider/surge.ts). */
const isSurge = (c: Cond): boolean => /\bMD-3\b/.test(c.message ?? '');

/** The fix for a machine with no free pool entry: maxSurge 0 where data could move, an entry where it cannot. */
function entryAdvice(o: WithConds, c: Cond, x: StallContext): Stall['fix'] {
  const pool = (o as { spec?: { configPoolRef?: { name?: string } } }).spec?.configPoolRef?.name ?? 'the pool';
  if (isSurge(c) && x.persistentPool !== false) {
    const owner = x.owner;
    const why = `${pool} keeps persistent disks per hostname. A surge machine cannot take the entry of the machine it replaces; an added entry would start it on a new hostname, and each later replacement would take the hostname and data another machine freed (MD-3). With maxSurge 0 the old machine goes first and its replacement gets its hostname and disks (MD-2). Do not add an entry.`;
    if (owner?.kind === 'KubeadmControlPlane') return { what: `set spec.rolloutStrategy.rollingUpdate.maxSurge: 0 on KubeadmControlPlane ${owner.name} (KCP-1)`, why };
    const md = owner?.name ?? '<machinedeployment>';
    return { what: `set maxSurge 0 on ${owner ? `MachineDeployment ${owner.name}` : 'its MachineDeployment'}`, command: `kubectl patch machinedeployment ${md} -n ${owner?.namespace ?? 'cpaas-system'} --type merge -p '{"spec":{"strategy":{"rollingUpdate":{"maxSurge":0,"maxUnavailable":1}}}}'`, why };
  }
  if (isSurge(c)) return { what: `add an entry to ${pool} (POOL-3), or set maxSurge 0`, why: `${pool} has no persistent disks, so no data moves (MD-3 does not apply).` };
  return { what: `add an entry to ${pool} first, then raise replicas (POOL-3)`, why: 'a new entry brings its own hostname, IP and new disks; no data moves.' };
}

/** The advice as one text: "Fix: what: command. Why: why". */
export function adviceText(f: Stall['fix']): string {
  return `Fix: ${f.what}${f.command ? `: ${f.command}` : ''}.${f.why ? ` Why: ${f.why}` : ''}`;
}

/** "2/3 etcd members healthy": quorum kept (a member joining or leaving during a rollout). */
function quorumKept(c: Cond): boolean {
  const m = /^(\d+)\/(\d+) etcd members healthy/.exec(c.message ?? '');
  return !!m && c.severity !== 'Error' && Number(m[1]) * 2 > Number(m[2]);
}

const KNOWN: Record<string, Known> = {
  PreflightCheckFailed: {
    category: 'preflight',
    rules: ['UPG-1'],
    summary: (o, _c, checks) => `MachineSet ${o.metadata.name}: scale up on hold by Cluster API preflight checks ${checks.join(', ')}${checks.some((x) => x.endsWith('VersionSkew')) ? ': the control plane must be upgraded first' : ''}`,
    advice: (_o, _c, checks) => (checks.some((x) => x.endsWith('VersionSkew')) ? { what: 'upgrade the control plane first (the upgrade document)', why: 'workers never run a newer version than the control plane; the held machines are then created by themselves (UPG-1).' } : { what: 'wait for the control plane to be stable', why: 'the MachineSet retries by itself.' }),
    // Held only while the control plane rolls ("ControlPlaneIsStable"): it goes on by itself once the control plane
    // is stable (machineset_preflight.go) — a moment of a healthy upgrade, not a fault; the version skew checks are.
    progress: (c) => {
      const checks = preflightChecks(c.message ?? '');
      return checks.length > 0 && checks.every((x) => x === 'ControlPlaneIsStable');
    },
  },
  PreflightChecksFailed: {
    category: 'etcd',
    rules: ['KCP-5'],
    summary: (o) => `KubeadmControlPlane ${o.metadata.name}: scaling blocked, a member's etcd is unhealthy`,
    advice: () => ({ what: 'restore etcd quorum (an operator action)', why: 'the control plane cannot roll or roll back without it (KCP-5).' }),
    // Upstream's preflight checks also hold a healthy rollout for a moment (a new member without its Node yet,
    // control plane pods starting: kubeadm/internal/controllers/scale.go preflightChecks): only etcd makes it a stall.
    progress: (c) => !/EtcdMemberHealthy/.test(c.message ?? ''),
  },
  EtcdClusterUnhealthy: {
    category: 'etcd',
    rules: ['KCP-5'],
    summary: (o) => `KubeadmControlPlane ${o.metadata.name}: etcd has no healthy quorum; rollout and rollback are blocked`,
    advice: () => ({ what: 'restore etcd quorum (an operator action), then retry the rollout or rollback', why: 'KCP refuses to scale on an unhealthy etcd (KCP-5).' }),
    progress: quorumKept,
  },
  NoFreePoolEntry: {
    category: 'pool',
    rules: ['POOL-2'],
    summary: (o, c, _k, x) => (isSurge(c) ? `${o.metadata.name}: a surge machine waits for a free pool entry${x.persistentPool !== false ? '; maxSurge must be 0 with persistent disks (MD-3)' : ''}` : `${o.metadata.name}: no free pool entry; add an entry to the pool (POOL-3)`),
    advice: (o, c, _k, x) => entryAdvice(o, c, x),
  },
  MaxSurgeTookAnotherEntry: { category: 'pool', rules: ['MD-3'], summary: (o) => `${o.metadata.name}: a surge machine took another hostname's entry and disks` },
  DiskDetachStuck: { category: 'disk', rules: ['DISK-9'], summary: (o) => `${o.metadata.name}: persistent disk detach stuck; the server is kept until it completes` },
  DiskDetachFailed: { category: 'disk', rules: ['DISK-9'], summary: (o) => `${o.metadata.name}: persistent disk detach failed; retried` },
  DiskAttachStuck: { category: 'disk', rules: ['DISK-3'], summary: (o) => `${o.metadata.name}: persistent disk attach stuck` },
  ImageNotFound: { category: 'image', rules: ['TPL-6'], summary: (o) => `${o.metadata.name}: the template's image is missing in HCS` },
  QuotaExceeded: { category: 'quota', rules: ['OPS-2'], summary: (o) => `${o.metadata.name}: HCS quota exhausted; retried every minute` },
  InsufficientCapacity: { category: 'capacity', rules: ['OPS-2'], summary: (o) => `${o.metadata.name}: HCS has no capacity for the flavor in the zone; retried every minute` },
  InvalidFlavor: { category: 'template', rules: ['TPL-2'], summary: (o) => `${o.metadata.name}: the template's flavor is not offered in the zone` },
  InvalidAvailabilityZone: { category: 'template', rules: ['TPL-2'], summary: (o) => `${o.metadata.name}: the template's availability zone does not exist` },
  SubnetNotResolved: { category: 'network', rules: ['NET-1'], summary: (o) => `${o.metadata.name}: the pool entry's subnet is not found` },
  IPAddressInUse: { category: 'network', rules: ['NET-7'], summary: (o) => `${o.metadata.name}: the entry's static IP is in use` },
  IPAddressInvalid: { category: 'network', rules: ['NET-7'], summary: (o) => `${o.metadata.name}: the entry's static IP is not usable in the subnet` },
  CloudAuthenticationFailed: { category: 'cloud', rules: ['HCS-5'], summary: (o) => `${o.metadata.name}: HCS rejected the credentials` },
  CloudPermissionDenied: { category: 'cloud', rules: ['HCS-5'], summary: (o) => `${o.metadata.name}: the credentials lack a permission` },
  InstanceBuildStuck: { category: 'cloud', rules: ['OPS-2'], summary: (o) => `${o.metadata.name}: the server build has not finished` },
  InstanceError: { category: 'cloud', rules: ['OPS-2'], summary: (o) => `${o.metadata.name}: the server is in ERROR` },
  InstanceCreateFailed: { category: 'cloud', rules: ['OPS-2'], summary: (o) => `${o.metadata.name}: HCS refused to create the server` },
  TemplateNotFound: { category: 'template', rules: ['RB-3'], summary: (o) => `${o.metadata.name}: the referenced template does not exist (re-create it)` },
  VersionSkewTooLarge: { category: 'preflight', rules: ['UPG-3'], summary: (o) => `${o.metadata.name}: the version jump is larger than the skew rules allow` },
  PoolNotFound: { category: 'pool', rules: ['POOL-1'], summary: (o) => `${o.metadata.name}: its HCSMachineConfigPool is missing` },
};

/** Reasons that mean work in progress (never a stall, whatever the severity). */
const PROGRESS = new Set([
  'InstanceProvisioning', 'InstanceDeleting', 'DetachingDisks', 'AttachingDisks', 'Draining', 'ScalingUp', 'ScalingDown', 'RollingUpdateInProgress', 'WaitingForMachineDeletion', 'Deleting', 'Bound',
  // A MachineSet's Ready summary while its machines come up, a KCP's while its new member joins.
  'ScalingOrWaitingForNodes', 'WaitingForAvailableMachines', 'ControlPlaneComponentsUnhealthy',
  // A replacement's persistent disks attaching, or still held by the machine it replaces while that one detaches them:
  // a rollout's own moments (past its limit the attach is DiskAttachStuck; a detach that hangs is the other machine's DiskDetachStuck).
  'DisksAttaching', 'DiskInUse',
]);

const RULE_ID = /\b(?:NET|POOL|DISK|TPL|BOOT|MD|KCP|UPG|OVN|RB|OPS|HCS)-\d+\b/g;

/** The preflight check names in a condition message (`"KubernetesVersionSkew" preflight check failed`). */
export function preflightChecks(message: string): string[] {
  return [...new Set([...message.matchAll(/"(\w+)" preflight check failed/g)].map((m) => m[1]!))];
}

function ruleIds(message: string): string[] {
  return [...new Set(message.match(RULE_ID) ?? [])];
}

const DEFAULT_ADVICE: Partial<Record<StallCategory, Stall['fix']>> = {
  disk: { what: 'check the volume and its server in HCS', why: 'the server is kept until the disk is free, then the provider goes on (DISK-9).' },
  image: { what: 'upload the image the template names, or correct spec.imageName in a new template', why: 'the server cannot be built without it (TPL-6).' },
  quota: { what: 'raise the HCS quota or scale in', why: 'the provider retries every minute (OPS-2).' },
  capacity: { what: 'another flavor or availability zone in a new template, or wait for capacity', why: 'retried every minute (OPS-2).' },
  template: { what: 'correct the template: a new HCSMachineTemplate, then point the owner at it' },
  network: { what: "correct the pool entry's network (subnet, a free static IP)" },
  cloud: { what: 'check HCS: the credentials and the server in the console' },
};

/** The pool and owner of an HCSMachine (for the advice). */
function contextOf(o: WithConds, kind: string, objects: ObjectsByKind): StallContext {
  if (kind !== 'HCSMachine') return {};
  const ns = o.metadata.namespace ?? '';
  const poolName = (o as { spec?: { configPoolRef?: { name?: string } } }).spec?.configPoolRef?.name;
  const pool = (objects.HCSMachineConfigPool ?? []).find((p) => p.metadata.name === poolName && (p.metadata.namespace ?? '') === ns) as { spec?: { configs?: { persistentDisks?: unknown[] }[] } } | undefined;
  const machine = (objects.Machine ?? []).find((m) => m.metadata.name === o.metadata.name && (m.metadata.namespace ?? '') === ns);
  const labels = machine?.metadata.labels ?? o.metadata.labels ?? {};
  const md = labels['cluster.x-k8s.io/deployment-name'];
  const kcp = labels['cluster.x-k8s.io/control-plane-name'];
  return {
    ...(pool ? { persistentPool: (pool.spec?.configs ?? []).some((c) => (c.persistentDisks ?? []).length > 0) } : {}),
    ...(md ? { owner: { kind: 'MachineDeployment' as const, name: md, namespace: ns } } : kcp ? { owner: { kind: 'KubeadmControlPlane' as const, name: kcp, namespace: ns } } : {}),
  };
}

/** Every stall of the objects, sorted by kind order then name; one per object and reason. */
export function whyWaiting(objects: ObjectsByKind): Stall[] {
  const out: Stall[] = [];
  for (const kind of STALL_KINDS) {
    const list = [...(objects[kind] ?? [])].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0)) as WithConds[];
    for (const o of list) {
      const seen = new Set<string>();
      // The specific condition before the summary (Ready mirrors the reason of another condition, with a shorter message).
      const conds = [...(o.status?.conditions ?? [])].sort((a, b) => Number(a.type === 'Ready') - Number(b.type === 'Ready'));
      for (const c of conds) {
        if (c.status !== 'False' || !c.reason || PROGRESS.has(c.reason) || c.reason.startsWith('WaitingFor') || seen.has(c.reason)) continue;
        const known = KNOWN[c.reason];
        if (!known && c.severity !== 'Error' && c.severity !== 'Warning') continue;
        if (known?.progress?.(c)) continue;
        // MachineSet preflight: MachinesCreated only (upstream puts it there; Ready summarizes it).
        if (c.reason === 'PreflightCheckFailed' && (kind !== 'MachineSet' || c.type !== 'MachinesCreated')) continue;
        seen.add(c.reason);
        const message = c.message ?? '';
        const checks = c.reason === 'PreflightCheckFailed' || c.reason === 'PreflightChecksFailed' ? preflightChecks(message) : [];
        const rules = [...new Set([...(known?.rules ?? []), ...(checks.some((x) => x.endsWith('VersionSkew')) ? ['UPG-3'] : []), ...ruleIds(message)])];
        const x = contextOf(o, kind, objects);
        const category = known?.category ?? 'other';
        const fix = known?.advice?.(o, c, checks, x) ?? DEFAULT_ADVICE[category] ?? { what: `see ${kind} ${o.metadata.name}'s condition ${c.type} (${c.reason}): kubectl describe ${kind.toLowerCase()} ${o.metadata.name}` };
        out.push({
          kind,
          namespace: o.metadata.namespace ?? '',
          name: o.metadata.name,
          category,
          condition: c.type,
          reason: c.reason,
          summary: known ? known.summary(o, c, checks, x) : `${kind} ${o.metadata.name}: ${c.type} ${c.reason}`,
          message,
          checks,
          rules,
          ...(kind === 'HCSMachine' && o.status?.hostname ? { hostname: o.status.hostname } : {}),
          advice: adviceText(fix),
          fix,
        });
      }
    }
  }
  return out;
}

/** The stalls as text lines (the CLI and the scenario runner's failure output): each stall, then its advice indented under it. */
export function stallLines(stalls: readonly Stall[], indent = '  '): string[] {
  return stalls.flatMap((s) => [
    `${indent}${s.kind} ${s.namespace ? `${s.namespace}/` : ''}${s.name}${s.hostname ? ` (${s.hostname})` : ''}: ${s.summary} — ${s.condition}=False ${s.reason}${s.checks.length ? ` [${s.checks.join(', ')}]` : ''}${s.rules.length ? ` (${s.rules.join(' ')})` : ''}`,
    `${indent}  → ${s.advice}`,
  ]);
}

/** The stalls counted by reason, most first (the summary line on top of the panel at any pool size). */
export function stallSummary(stalls: readonly Stall[]): { reason: string; category: StallCategory; count: number; rules: string[] }[] {
  const by = new Map<string, { reason: string; category: StallCategory; count: number; rules: Set<string> }>();
  for (const s of stalls) {
    const x = by.get(s.reason) ?? { reason: s.reason, category: s.category, count: 0, rules: new Set<string>() };
    x.count++;
    for (const r of s.rules) x.rules.add(r);
    by.set(s.reason, x);
  }
  return [...by.values()].sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1)).map((x) => ({ ...x, rules: [...x.rules].sort() }));
}
