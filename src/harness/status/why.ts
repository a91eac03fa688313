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
 * - KubeadmControlPlane Resized PreflightChecksFailed, EtcdClusterHealthy
 *   EtcdClusterUnhealthy (etcd quorum, KCP-5);
 * - HCSMachine: NoFreePoolEntry (POOL-2), DiskDetachStuck / DiskDetachFailed
 *   (DISK-9), DiskAttachStuck (DISK-3), ImageNotFound (TPL-6), QuotaExceeded,
 *   InsufficientCapacity (OPS-2), invalid flavor / zone (TPL-2), addresses
 *   (NET-7), credentials (HCS-5), a build stuck or failed, a surge machine on
 *   another entry (MD-3);
 * - any other condition False with severity Error or Warning on these kinds.
 * Progress (provisioning, deleting, draining, a detach under its stuck limit,
 * any WaitingFor… reason: an earlier step not done yet) is not a stall.
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

export const WHY_KINDS = ['Cluster', 'HCSCluster', 'KubeadmControlPlane', 'MachineDeployment', 'MachineSet', 'HCSMachine'] as const;

interface Known {
  category: StallCategory;
  rules: string[];
  summary: (o: WithConds, c: Cond, checks: string[]) => string;
}

const KNOWN: Record<string, Known> = {
  PreflightCheckFailed: {
    category: 'preflight',
    rules: ['UPG-1'],
    summary: (o, _c, checks) => `MachineSet ${o.metadata.name}: scale up on hold by Cluster API preflight checks ${checks.join(', ')}${checks.some((x) => x.endsWith('VersionSkew')) ? ': the control plane must be upgraded first' : ''}`,
  },
  PreflightChecksFailed: { category: 'preflight', rules: ['KCP-5'], summary: (o) => `KubeadmControlPlane ${o.metadata.name}: scaling waits for the control plane preflight checks` },
  EtcdClusterUnhealthy: { category: 'etcd', rules: ['KCP-5'], summary: (o) => `KubeadmControlPlane ${o.metadata.name}: etcd has no healthy quorum; rollout and rollback are blocked` },
  NoFreePoolEntry: { category: 'pool', rules: ['POOL-2'], summary: (o) => `${o.metadata.name}: no free pool entry; add an entry to the pool (POOL-3)` },
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
]);

const RULE_ID = /\b(?:NET|POOL|DISK|TPL|BOOT|MD|KCP|UPG|OVN|RB|OPS|HCS)-\d+\b/g;

/** The preflight check names in a condition message (`"KubernetesVersionSkew" preflight check failed`). */
export function preflightChecks(message: string): string[] {
  return [...new Set([...message.matchAll(/"(\w+)" preflight check failed/g)].map((m) => m[1]!))];
}

function ruleIds(message: string): string[] {
  return [...new Set(message.match(RULE_ID) ?? [])];
}

/** Every stall of the objects, sorted by kind order then name; one per object and reason. */
export function whyWaiting(objects: ObjectsByKind): Stall[] {
  const out: Stall[] = [];
  for (const kind of WHY_KINDS) {
    const list = [...(objects[kind] ?? [])].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0)) as WithConds[];
    for (const o of list) {
      const seen = new Set<string>();
      // The specific condition before the summary (Ready mirrors the reason of another condition, with a shorter message).
      const conds = [...(o.status?.conditions ?? [])].sort((a, b) => Number(a.type === 'Ready') - Number(b.type === 'Ready'));
      for (const c of conds) {
        if (c.status !== 'False' || !c.reason || PROGRESS.has(c.reason) || c.reason.startsWith('WaitingFor') || seen.has(c.reason)) continue;
        const known = KNOWN[c.reason];
        if (!known && c.severity !== 'Error' && c.severity !== 'Warning') continue;
        // MachineSet preflight: MachinesCreated only (upstream puts it there; Ready summarizes it).
        if (c.reason === 'PreflightCheckFailed' && (kind !== 'MachineSet' || c.type !== 'MachinesCreated')) continue;
        seen.add(c.reason);
        const message = c.message ?? '';
        const checks = c.reason === 'PreflightCheckFailed' || c.reason === 'PreflightChecksFailed' ? preflightChecks(message) : [];
        const rules = [...new Set([...(known?.rules ?? []), ...(checks.some((x) => x.endsWith('VersionSkew')) ? ['UPG-3'] : []), ...ruleIds(message)])];
        out.push({
          kind,
          namespace: o.metadata.namespace ?? '',
          name: o.metadata.name,
          category: known?.category ?? 'other',
          condition: c.type,
          reason: c.reason,
          summary: known ? known.summary(o, c, checks) : `${kind} ${o.metadata.name}: ${c.type} ${c.reason}`,
          message,
          checks,
          rules,
          ...(kind === 'HCSMachine' && o.status?.hostname ? { hostname: o.status.hostname } : {}),
        });
      }
    }
  }
  return out;
}

/** The stalls as text lines (the CLI and the scenario runner's failure output). */
export function stallLines(stalls: readonly Stall[], indent = '  '): string[] {
  return stalls.map((s) => `${indent}${s.kind} ${s.namespace ? `${s.namespace}/` : ''}${s.name}${s.hostname ? ` (${s.hostname})` : ''}: ${s.summary} — ${s.condition}=False ${s.reason}${s.checks.length ? ` [${s.checks.join(', ')}]` : ''}${s.rules.length ? ` (${s.rules.join(' ')})` : ''}`);
}
