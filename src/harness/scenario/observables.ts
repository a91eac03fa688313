/**
 * The observable surface (issue 37): everything a provider or the model writes
 * that a user can observe — status fields, conditions and their reasons, Event
 * reasons, labels, taints, annotations, pods, and every cloud attribute — with
 * the checks that read it. A row read by no check says why.
 *
 * docs/provider.md "Observable surface" is generated from this list
 * (observablesTable), and test/scenario/observables.test.ts fails when an
 * observable the code writes has no row here (the provider CRDs' status
 * fields, the condition and Event reasons in src/product/provider, the cloud
 * metadata keys of src/product/api/metadata.ts), when a row names a check or
 * an invariant that does not exist, or when the document is not the table.
 */
import { CHECKS } from './checks.js';

/** The continuous invariants (src/harness/scenario/*.ts), by the name rows use as `invariant:<name>`. */
export const INVARIANTS: Record<string, { file: string; doc: string }> = {
  cloud: { file: 'invariants.ts', doc: 'DISK-9: a persistent volume is never deleted nor attached to two servers' },
  cluster: { file: 'invariants.ts', doc: 'POOL-4 one machine per entry; TPL-4 providerID/serverId; BOOT-4 kubelet version; NET-7 the entry\'s IPs on the Node' },
  rollout: { file: 'invariants.ts', doc: 'MD-1 rollout bounds (maxSurge, maxUnavailable, available machines kept)' },
  certificates: { file: 'invariants.ts', doc: 'BOOT-2/BOOT-3 kubelet certificate chain, CN, O, SANs' },
  orphans: { file: 'invariants.ts', doc: 'at rest: HCS-1 no server without an HCSMachine, TPL-3 no leaked ephemeral volume' },
  stranded: { file: 'stranded.ts', doc: 'DISK-8/MD-3 data left on a detached disk while its hostname serves' },
  'disk-reuse': { file: 'disk-reuse.ts', doc: 'DISK-3/DISK-6/DISK-9/POOL-4 where persistent disks are attached and mounted; TPL-3 ephemeral paths on no persistent disk, each data volume mounted from its own volume' },
  'kcp-scale-down': { file: 'kcp-scale-down.ts', doc: 'KCP-2 the machine a scale-down removes' },
  'drain-order': { file: 'drain-order.ts', doc: 'MD-4 the Node is drained before its infrastructure goes' },
  'md-rollout-plan': { file: 'md-rollout-plan.ts', doc: 'MD-1 MachineSet replicas follow the rolling-update plan' },
  'control-plane-nodes': { file: 'control-plane-nodes.ts', doc: 'BOOT-1 role label and taints, KCP-3 static pods, OVN-2 Kube-OVN replicas per control plane Node' },
  'pool-status': { file: 'pool-status.ts', doc: 'POOL-5 every field of the pool status agrees with the cloud and the spec within 60 s' },
  'cp-placement': { file: 'cp-placement.ts', doc: 'KCP-2 failure domains published and used, balanced; TPL-2 servers in their Machine\'s zone' },
  'node-server': { file: 'node-server.ts', doc: 'HCS-1 a Node exists while its server does, and goes within 60 s once the server is gone' },
  'server-spec': { file: 'server-spec.ts', doc: 'TPL-1/TPL-2/TPL-3/DISK-4 a server has its HCSMachine\'s flavor, image, root and data volumes, and its persistent volumes the accepted size and type' },
  'stuck-timing': { file: 'stuck-timing.ts', doc: 'OPS-2 a Stuck reason only once its wait lasted the documented time (detach and attach 5 min, build 15 min)' },
};

export type ObservableKind = 'field' | 'condition' | 'reason' | 'label' | 'taint' | 'annotation' | 'pod' | 'object' | 'file' | 'cloud';

export interface Observable {
  /** What is observed, e.g. `HCSMachineConfigPool.status.entries[].persistentDisks[].phase`. */
  what: string;
  kind: ObservableKind;
  /** Who writes it. */
  writer: 'provider' | 'Cluster API' | 'guest' | 'workload' | 'cloud';
  /** `check:<type>` (CHECKS) or `invariant:<name>` (INVARIANTS). */
  checkedBy: string[];
  /** Why no check reads it (required when checkedBy is empty). */
  reason?: string;
  /** The values a row covers (condition and Event reasons). */
  names?: readonly string[];
}

const P = 'provider' as const;
const cond = (kind: string, field: string): string => `${kind}.status.conditions[].${field}`;
const CONDITION_FIELDS = (kind: string): Observable[] => [
  { what: cond(kind, 'type'), kind: 'field', writer: P, checkedBy: ['check:condition'] },
  { what: cond(kind, 'status'), kind: 'field', writer: P, checkedBy: ['check:condition'] },
  { what: cond(kind, 'reason'), kind: 'field', writer: P, checkedBy: ['check:condition'] },
  { what: cond(kind, 'message'), kind: 'field', writer: P, checkedBy: ['check:condition'], reason: 'free text: read only by reference checks (`contains`), never by the contract' },
  { what: cond(kind, 'severity'), kind: 'field', writer: P, checkedBy: [], reason: 'v1beta1 severity of a False condition: informational; no document or check acts on it' },
  { what: cond(kind, 'lastTransitionTime'), kind: 'field', writer: P, checkedBy: [], reason: 'stamped by the shared condition helper when the status flips; the documents read type, status and reason' },
];

/** Reasons the library reads (condition `reason` and `event.<Reason>` checks) — the stuck states of OPS-2 and the contract. */
const READ_REASONS = [
  'NoFreePoolEntry', 'InvalidFlavor', 'ImageNotFound', 'InsufficientCapacity', 'QuotaExceeded', 'CloudAuthenticationFailed', 'IPAddressInUse',
  'DiskDetachStuck', 'SubnetNotResolved', 'MountPathConflict', 'MaxSurgeTookAnotherEntry', 'VersionMismatch', 'KubeOvnAnnotationNotApplied',
  'ImmutableFieldChanged',
] as const;
/** Progress and success reasons: how far the reference provider got, in its own words. */
const PROGRESS_REASONS = [
  'Active', 'Attached', 'Bound', 'Created', 'Deleting', 'DetachingDisks', 'DisksAttaching', 'InstanceDeleting', 'InstanceProvisioning', 'KubeOvnAppReleaseCreated',
  'MatchesOSSupportMatrix', 'ValuesSynced', 'WaitingForBootstrapData', 'WaitingForCluster', 'WaitingForClusterCA', 'WaitingForClusterInfrastructure', 'WaitingForControlPlane', 'WaitingForOwner',
] as const;
/** Stuck-state reasons no library flow produces yet. */
const UNREACHED_REASONS = [
  'CloudPermissionDenied', 'DiskAttachFailed', 'DiskAttachStuck', 'DiskDetachFailed', 'DiskInUse', 'DiskMissing', 'IPAddressInvalid', 'InstanceBuildStuck', 'InstanceError',
  'InstanceNotActive', 'InstanceNotFound', 'InvalidAvailabilityZone', 'InvalidBootstrapData', 'InvalidConfiguration', 'InvalidPoolEntry', 'MissingKubeOvnVersion', 'NetworkNotReady', 'PoolNotFound', 'SubnetFull',
] as const;

export const OBSERVABLES: readonly Observable[] = [
  // ---- HCSCluster
  { what: 'HCSCluster.status.ready', kind: 'field', writer: P, checkedBy: ['check:upgradePrerequisites', 'check:object'] },
  { what: 'HCSCluster.status.network.subnets[].name', kind: 'field', writer: P, checkedBy: ['check:condition'], reason: 'the provider\'s resolution of spec.network.subnets; judged through its effect (NetworkReady, NICs in those subnets: invariant NET-7)' },
  { what: 'HCSCluster.status.network.subnets[].id', kind: 'field', writer: P, checkedBy: ['invariant:cluster'], reason: 'judged through its effect: the servers\' NICs (NET-7, the entry\'s IPs on the Node)' },
  { what: 'HCSCluster.status.network.subnets[].cidr', kind: 'field', writer: P, checkedBy: [], reason: 'a copy of the VPC subnet\'s CIDR; NET-7 refusals read the cloud\'s subnet, not this copy' },
  { what: 'HCSCluster.status.failureDomains.*.controlPlane', kind: 'field', writer: P, checkedBy: ['invariant:cp-placement', 'check:object'] },
  { what: 'HCSCluster.status.failureDomains.*.attributes.*', kind: 'field', writer: P, checkedBy: [], reason: 'HCS zones carry no attributes: the provider writes none' },
  { what: 'HCSCluster.status.failureReason', kind: 'field', writer: P, checkedBy: [], reason: 'never set on HCSCluster (every HCSCluster problem is retried and reported in conditions)' },
  { what: 'HCSCluster.status.failureMessage', kind: 'field', writer: P, checkedBy: [], reason: 'never set on HCSCluster (see failureReason)' },
  ...CONDITION_FIELDS('HCSCluster'),
  // ---- HCSMachine
  { what: 'HCSMachine.spec.providerID', kind: 'field', writer: P, checkedBy: ['invariant:cluster', 'invariant:node-server', 'invariant:control-plane-nodes'] },
  { what: 'HCSMachine.spec.serverId', kind: 'field', writer: P, checkedBy: ['invariant:cluster', 'invariant:orphans', 'invariant:disk-reuse', 'invariant:node-server'] },
  { what: 'HCSMachine.status.ready', kind: 'field', writer: P, checkedBy: ['check:machines'], reason: 'read through Cluster API: a Machine is Provisioned/Running only once it is true' },
  { what: 'HCSMachine.status.addresses[].type', kind: 'field', writer: P, checkedBy: [], reason: 'copied by Cluster API to Machine.status.addresses; no document reads them (the Node\'s addresses are checked: NET-7)' },
  { what: 'HCSMachine.status.addresses[].address', kind: 'field', writer: P, checkedBy: [], reason: 'as addresses[].type' },
  { what: 'HCSMachine.status.hostname', kind: 'field', writer: P, checkedBy: ['invariant:disk-reuse', 'invariant:cluster', 'invariant:pool-status', 'check:persistentDisks', 'check:volume'] },
  { what: 'HCSMachine.status.serverStatus', kind: 'field', writer: P, checkedBy: [], reason: 'a copy of the ECS status at the last reconcile (not refreshed while the server is stable); the cloud\'s own status is checked (check:servers, invariant:node-server)' },
  { what: 'HCSMachine.status.failureReason', kind: 'field', writer: P, checkedBy: [], reason: 'terminal failures (TPL-2 InvalidConfiguration): the library reads the InstanceReady reason that accompanies them; Cluster API marks the Machine Failed' },
  { what: 'HCSMachine.status.failureMessage', kind: 'field', writer: P, checkedBy: [], reason: 'as failureReason (free text)' },
  ...CONDITION_FIELDS('HCSMachine'),
  // ---- HCSMachineConfigPool
  { what: 'HCSMachineConfigPool.status.total', kind: 'field', writer: P, checkedBy: ['invariant:pool-status'] },
  { what: 'HCSMachineConfigPool.status.available', kind: 'field', writer: P, checkedBy: ['invariant:pool-status', 'check:object'] },
  { what: 'HCSMachineConfigPool.status.observedGeneration', kind: 'field', writer: P, checkedBy: [], reason: 'bookkeeping of the last spec the provider read; the fields it derives from the spec are checked (invariant:pool-status)' },
  { what: 'HCSMachineConfigPool.status.entries[].hostname', kind: 'field', writer: P, checkedBy: ['invariant:pool-status'] },
  { what: 'HCSMachineConfigPool.status.entries[].machine', kind: 'field', writer: P, checkedBy: ['invariant:pool-status', 'invariant:disk-reuse'] },
  ...(['slot', 'size', 'type', 'mountPath', 'format', 'mountOptions[]'] as const).map((f): Observable => ({ what: `HCSMachineConfigPool.status.entries[].acceptedDisks[].${f}`, kind: 'field', writer: P, checkedBy: ['invariant:disk-reuse', 'check:object'] })),
  { what: 'HCSMachineConfigPool.status.entries[].persistentDisks[].slot', kind: 'field', writer: P, checkedBy: ['invariant:pool-status'] },
  ...(['volumeId', 'phase', 'attachedServerId', 'mountPath', 'lastTransitionTime'] as const).map((f): Observable => ({ what: `HCSMachineConfigPool.status.entries[].persistentDisks[].${f}`, kind: 'field', writer: P, checkedBy: ['invariant:pool-status', ...(f === 'phase' ? ['check:object'] : [])] })),
  { what: 'HCSMachineConfigPool.status.entries[].persistentDisks[].message', kind: 'field', writer: P, checkedBy: [], reason: 'free text on a disk in use by another server; the attachment itself is checked (attachedServerId, invariant:disk-reuse)' },
  ...CONDITION_FIELDS('HCSMachineConfigPool'),
  // ---- condition types and reasons (conditions and core/v1 Events of the provider's objects)
  { what: 'HCSMachine conditions Ready, InstanceReady, PoolEntryBound, PersistentDisksReady', kind: 'condition', writer: P, checkedBy: ['check:condition'] },
  { what: 'HCSMachine condition PersistentDiskReuse', kind: 'condition', writer: P, checkedBy: ['check:condition'], reason: 'reference: the reference provider\'s MD-3 flag' },
  { what: 'HCSCluster conditions NetworkReady, VersionsConsistent, KubeOvnReleaseReady, Ready', kind: 'condition', writer: P, checkedBy: ['check:condition'] },
  { what: 'HCSMachineConfigPool condition DisksAccepted', kind: 'condition', writer: P, checkedBy: ['check:condition'] },
  { what: 'condition and Event reasons of stuck states (OPS-2)', kind: 'reason', writer: P, checkedBy: ['check:condition', 'check:events', 'invariant:stuck-timing'], names: READ_REASONS },
  { what: 'progress and success reasons', kind: 'reason', writer: P, checkedBy: [], reason: 'how far the reference provider got, in its own words: the contract reads status True/False and the stuck-state reasons', names: PROGRESS_REASONS },
  { what: 'transient cloud errors (5xx, 429 throttling: retried)', kind: 'reason', writer: P, checkedBy: [], reason: 'produced by scenarios/lost-create.yaml (throttling) and cloud-faults; judged by their effect (the machines come up), the reason text is the reference provider\'s', names: ['CloudError'] },
  { what: 'stuck-state reasons no library flow produces', kind: 'reason', writer: P, checkedBy: [], reason: 'needs a flow (docs/scenarios.md "Observable surface: open rows"): states the library does not drive the cloud into', names: UNREACHED_REASONS },
  { what: 'Event annotation hcs-testbed.io/rules', kind: 'annotation', writer: P, checkedBy: ['check:events'], reason: 'reference: the rules an Event cites (events `rule`)' },
  // ---- Cluster API and workload objects the provider's work shows through
  { what: 'Machine.spec.failureDomain (control plane)', kind: 'field', writer: 'Cluster API', checkedBy: ['invariant:cp-placement', 'invariant:kcp-scale-down'] },
  { what: 'Cluster.status.failureDomains', kind: 'field', writer: 'Cluster API', checkedBy: ['invariant:cp-placement', 'check:object'] },
  { what: 'Machine annotation controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration', kind: 'annotation', writer: 'Cluster API', checkedBy: ['invariant:control-plane-nodes'] },
  { what: 'HCSMachine annotation cluster.x-k8s.io/cloned-from-name', kind: 'annotation', writer: 'Cluster API', checkedBy: ['invariant:kcp-scale-down'] },
  { what: 'Node label node-role.kubernetes.io/control-plane', kind: 'label', writer: 'guest', checkedBy: ['invariant:control-plane-nodes'] },
  { what: 'Node taint node-role.kubernetes.io/control-plane:NoSchedule', kind: 'taint', writer: 'guest', checkedBy: ['invariant:control-plane-nodes'] },
  { what: 'Node label kube-ovn/role=master', kind: 'label', writer: 'workload', checkedBy: ['invariant:control-plane-nodes'] },
  { what: 'Node status.addresses InternalIP', kind: 'field', writer: 'guest', checkedBy: ['invariant:cluster'] },
  { what: 'Node status.nodeInfo.kubeletVersion', kind: 'field', writer: 'guest', checkedBy: ['invariant:cluster', 'check:nodes'] },
  { what: 'Node Ready condition', kind: 'condition', writer: 'guest', checkedBy: ['check:nodes', 'invariant:rollout'] },
  { what: 'Node spec.providerID', kind: 'field', writer: 'guest', checkedBy: ['invariant:node-server', 'invariant:control-plane-nodes'] },
  { what: 'Node existence compared with its server\'s state', kind: 'object', writer: 'workload', checkedBy: ['invariant:node-server'] },
  { what: 'static pods etcd, kube-apiserver, kube-controller-manager, kube-scheduler per control plane Node', kind: 'pod', writer: 'workload', checkedBy: ['invariant:control-plane-nodes'] },
  { what: 'Deployments ovn-central, kube-ovn-controller spec.replicas (follow the control plane Nodes)', kind: 'field', writer: 'workload', checkedBy: ['invariant:control-plane-nodes'] },
  { what: 'Deployment coredns spec.replicas', kind: 'field', writer: 'workload', checkedBy: ['invariant:control-plane-nodes'] },
  { what: 'DaemonSet pods kube-proxy, kube-ovn-cni, ovs-ovn per Node', kind: 'pod', writer: 'workload', checkedBy: ['invariant:drain-order'], reason: 'drain-order reads them as pods a drain leaves; one per Node is not checked (no flow loses one)' },
  { what: 'kubelet certificate /etc/kubernetes/pki/kubelet.crt, .key', kind: 'file', writer: 'provider', checkedBy: ['invariant:certificates'] },
  { what: 'mounts of a running node (persistent disks, dataVolumes, root)', kind: 'file', writer: 'guest', checkedBy: ['check:mount', 'invariant:disk-reuse'] },
  { what: 'files written to persistent paths', kind: 'file', writer: 'guest', checkedBy: ['check:markers', 'check:file', 'invariant:stranded'] },
  // ---- cloud attributes
  { what: 'server status', kind: 'cloud', writer: 'cloud', checkedBy: ['check:servers', 'invariant:node-server'] },
  { what: 'server name', kind: 'cloud', writer: P, checkedBy: ['invariant:cluster'], reason: 'reference: the server name equal to the HCSMachine name (TPL-4 serverId finding)' },
  { what: 'server availability zone', kind: 'cloud', writer: P, checkedBy: ['invariant:cp-placement'] },
  { what: 'server NICs and IPs', kind: 'cloud', writer: P, checkedBy: ['invariant:certificates', 'invariant:cluster'] },
  { what: 'server flavor', kind: 'cloud', writer: P, checkedBy: ['invariant:server-spec'] },
  { what: 'server image', kind: 'cloud', writer: P, checkedBy: ['invariant:cluster', 'invariant:server-spec'] },
  { what: 'server root volume type and size', kind: 'cloud', writer: P, checkedBy: ['invariant:server-spec'] },
  { what: 'server data volumes (dataVolumes)', kind: 'cloud', writer: P, checkedBy: ['invariant:orphans', 'invariant:disk-reuse', 'invariant:server-spec', 'check:mount'] },
  { what: 'server user data (cloud-init)', kind: 'cloud', writer: P, checkedBy: ['invariant:certificates', 'check:mount'], reason: 'read through the guest that boots it (mounts, files, kubelet certificate)' },
  { what: 'persistent volume status and attachment', kind: 'cloud', writer: P, checkedBy: ['check:persistentDisks', 'check:volume', 'invariant:disk-reuse', 'invariant:cloud'] },
  { what: 'persistent volume size and type', kind: 'cloud', writer: P, checkedBy: ['invariant:server-spec'] },
  { what: 'server metadata hcs.io/cluster', kind: 'cloud', writer: P, checkedBy: ['check:nodes'], reason: 'read by the guest (BOOT-2: which cluster it joins): a wrong one fails the join, which check:nodes sees' },
  { what: 'server metadata hcs.io/namespace', kind: 'cloud', writer: P, checkedBy: ['check:nodes'], reason: 'as hcs.io/cluster' },
  { what: 'server metadata hcs.io/machine', kind: 'cloud', writer: P, checkedBy: ['invariant:node-server'], reason: 'read by the cloud node lifecycle to find a Node\'s server' },
  { what: 'server metadata hcs.io/machine-uid', kind: 'cloud', writer: P, checkedBy: [], reason: 'the reference provider\'s adoption guard (server name + uid); not in the contract' },
  { what: 'server metadata hcs.io/hostname', kind: 'cloud', writer: P, checkedBy: ['invariant:certificates', 'check:nodes'], reason: 'the guest\'s node name: a wrong one fails BOOT-2 (CN, SANs) or registers another Node' },
  { what: 'server metadata hcs.io/pool', kind: 'cloud', writer: P, checkedBy: [], reason: 'the reference provider\'s bookkeeping; not in the contract' },
  { what: 'server metadata hcs.io/persistent-volumes', kind: 'cloud', writer: P, checkedBy: ['check:persistentDisks'] },
  { what: 'server metadata hcs.io/image', kind: 'cloud', writer: P, checkedBy: ['invariant:cluster'], reason: 'the guest looks up the image\'s Kubernetes version by it (BOOT-4)' },
  { what: 'server metadata hcs.io/image-kubernetes-version', kind: 'cloud', writer: P, checkedBy: ['invariant:cluster'], reason: 'BOOT-4' },
  { what: 'server metadata hcs.io/kubernetes-version', kind: 'cloud', writer: P, checkedBy: ['invariant:cluster'], reason: 'BOOT-4: the guest refuses to join when the image carries another' },
  { what: 'volume metadata hcs.io/cluster', kind: 'cloud', writer: P, checkedBy: ['invariant:disk-reuse', 'invariant:pool-status'] },
  { what: 'volume metadata hcs.io/namespace', kind: 'cloud', writer: P, checkedBy: [], reason: 'the reference provider\'s bookkeeping; the identity is (cluster, hostname, slot)' },
  { what: 'volume metadata hcs.io/hostname', kind: 'cloud', writer: P, checkedBy: ['check:persistentDisks', 'check:volume', 'invariant:disk-reuse', 'invariant:pool-status'] },
  { what: 'volume metadata hcs.io/slot', kind: 'cloud', writer: P, checkedBy: ['check:persistentDisks', 'check:volume', 'invariant:disk-reuse', 'invariant:pool-status'] },
  { what: 'volume metadata hcs.io/persistent', kind: 'cloud', writer: P, checkedBy: ['invariant:cloud', 'invariant:orphans', 'invariant:disk-reuse'] },
  { what: 'volume metadata hcs.io/pool', kind: 'cloud', writer: P, checkedBy: [], reason: 'the reference provider\'s bookkeeping; not in the contract' },
];

/** The references a row names that do not exist (a check type, an invariant). */
export function unknownReferences(rows: readonly Observable[] = OBSERVABLES): string[] {
  const bad: string[] = [];
  for (const r of rows) {
    for (const c of r.checkedBy) {
      const [k, name] = c.split(':') as [string, string];
      if (k === 'check' ? !CHECKS[name] : k === 'invariant' ? !INVARIANTS[name] : true) bad.push(`${r.what}: ${c}`);
    }
  }
  return bad;
}

/** The markdown table of docs/provider.md "Observable surface". */
export function observablesTable(rows: readonly Observable[] = OBSERVABLES): string {
  const esc = (s: string): string => s.replace(/\|/g, '\\|');
  const lines = ['| observable | kind | written by | read by | why not (or only so) |', '| --- | --- | --- | --- | --- |'];
  for (const r of rows) {
    const what = `\`${esc(r.what)}\`${r.names ? `: ${r.names.map((n) => `\`${n}\``).join(', ')}` : ''}`;
    lines.push(`| ${what} | ${r.kind} | ${r.writer} | ${r.checkedBy.map((c) => `\`${c}\``).join(', ') || '—'} | ${esc(r.reason ?? '')} |`);
  }
  const inv = Object.entries(INVARIANTS).map(([k, v]) => `| \`invariant:${k}\` | src/harness/scenario/${v.file} | ${esc(v.doc)} |`);
  return [...lines, '', '| invariant | source | states |', '| --- | --- | --- |', ...inv].join('\n') + '\n';
}
