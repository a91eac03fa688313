/**
 * The provider contract, as the checks read it (issue 22; docs/provider.md
 * "The contract").
 *
 * Every check the library makes is either
 * - `contract`: it reads only what the cloud, the Kubernetes API and the
 *   guest expose — objects and their documented fields, condition types and
 *   reasons, Kubernetes Event reasons, cloud state (servers, volumes and their
 *   metadata), files on disks, and the testbed's own Cluster API model, guest
 *   and cloud — so any provider can be held to it; or
 * - `reference`: it reads what only the reference provider (src/product/provider)
 *   produces — its log wording, its internal decision events, free-text
 *   condition and Event messages, how many times it repeats an Event, the
 *   `hcs-testbed.io/rules` annotation, its naming choices (server name ==
 *   HCSMachine name) and conditions outside the contract.
 *
 * `hcs-testbed conformance` (src/harness/scenario/conformance.ts) runs only the
 * contract ones; a reference check with a contract core (the same check
 * without its reference-only parameters) is run as that core.
 *
 * The lists below are the contract's vocabulary: docs/provider.md names
 * every entry (test/scenario/contract.test.ts holds the two together).
 */
import { META_CLUSTER, META_HOSTNAME, META_IMAGE_K8S_VERSION, META_IMAGE_NAME, META_K8S_VERSION, META_NAMESPACE, META_PERSISTENT, META_PERSISTENT_VOLUMES, META_SLOT } from '../../product/api/metadata.js';

export type Tier = 'contract' | 'reference';

export interface Classification {
  tier: Tier;
  /** Why a check is reference (what of the reference provider it reads). */
  why?: string;
  /** Reference checks: the contract part, i.e. the same check with these parameters (run in conformance mode). */
  core?: Record<string, unknown>;
}

export const CONTRACT: Classification = { tier: 'contract' };

/** Kinds whose status, conditions and Events the provider writes (anything else is Cluster API's, the guest's or the workload's). */
export const PROVIDER_KINDS = ['HCSCluster', 'HCSMachine', 'HCSMachineConfigPool', 'HCSMachineTemplate'] as const;

export interface ContractCondition {
  kind: (typeof PROVIDER_KINDS)[number];
  type: string;
  /** Reasons of the contract for status False (a check naming another reason is reference). */
  reasons: readonly string[];
  rules: readonly string[];
  /** Only scenarios exercising these rules read it: a provider that does not set it fails those rules, nothing else. */
  doc: string;
}

/** Conditions on the provider's objects that contract checks read (type, status and reason; never the message). */
export const CONTRACT_CONDITIONS: readonly ContractCondition[] = [
  { kind: 'HCSMachine', type: 'Ready', reasons: ['NoFreePoolEntry'], rules: ['POOL-2', 'OPS-2'], doc: 'mirrors the failing one of the three below; True once the server is ACTIVE with its persistent disks attached' },
  { kind: 'HCSMachine', type: 'PoolEntryBound', reasons: ['NoFreePoolEntry'], rules: ['POOL-2', 'OPS-2'], doc: 'False/NoFreePoolEntry while the machine waits for a free pool entry' },
  {
    kind: 'HCSMachine',
    type: 'InstanceReady',
    reasons: ['InvalidFlavor', 'ImageNotFound', 'InsufficientCapacity', 'QuotaExceeded', 'CloudAuthenticationFailed', 'DiskDetachStuck', 'SubnetNotResolved', 'IPAddressInUse'],
    rules: ['TPL-2', 'TPL-6', 'HCS-5', 'HCS-6', 'NET-4', 'NET-7', 'OPS-2'],
    doc: 'False with the reason of the stuck state (cloud answer mapped by error code; see "Stuck states")',
  },
  { kind: 'HCSMachine', type: 'PersistentDisksReady', reasons: ['MountPathConflict'], rules: ['DISK-7'], doc: 'False/MountPathConflict when a persistent mountPath is also a dataVolumes mountPath (nothing created)' },
  { kind: 'HCSCluster', type: 'NetworkReady', reasons: [], rules: ['NET-4', 'NET-5'], doc: 'True once spec.network.subnets resolve; False while a subnet does not (reason free)' },
];

/** Kubernetes Event reasons (core/v1 Event on the provider's object, `source.component: hcs-controller-manager`) that contract checks read: at least one, or none. */
export const CONTRACT_EVENT_REASONS: readonly { reason: string; rules: readonly string[] }[] = [
  { reason: 'NoFreePoolEntry', rules: ['POOL-2', 'OPS-2'] },
  { reason: 'InvalidFlavor', rules: ['TPL-2'] },
  { reason: 'ImageNotFound', rules: ['TPL-6'] },
  { reason: 'SubnetNotResolved', rules: ['NET-4'] },
  { reason: 'MountPathConflict', rules: ['DISK-7'] },
  { reason: 'DiskDetachStuck', rules: ['OPS-2', 'DISK-9'] },
];

/** Event reasons the testbed's own Cluster API model and etcd emit (not the provider's): contract for a provider. */
export const TESTBED_EVENT_REASONS = ['ControlPlaneUnhealthy', 'EtcdQuorumLost'] as const;

/** Fields of the provider's objects that contract checks and invariants read, with the rule each serves. */
export const CONTRACT_FIELDS: readonly { field: string; rules: readonly string[]; doc: string }[] = [
  { field: 'HCSMachine.spec.providerID', rules: ['TPL-4'], doc: 'hcs://<cluster>/<HCSMachine name>; equal to the Machine\'s spec.providerID and to the Node\'s' },
  { field: 'HCSMachine.spec.serverId', rules: ['TPL-4', 'HCS-1', 'DISK-3'], doc: 'the ECS server id; every live server is some HCSMachine\'s serverId (no orphans at rest)' },
  { field: 'HCSMachine.status.ready', rules: ['TPL-4'], doc: 'true once the server is ACTIVE with its persistent disks attached (Cluster API infrastructure contract)' },
  { field: 'HCSMachine.status.hostname', rules: ['POOL-4', 'DISK-3', 'DISK-8'], doc: 'the pool entry (hostname) the machine holds' },
  { field: 'HCSMachineConfigPool.status.total', rules: ['POOL-5'], doc: 'number of entries' },
  { field: 'HCSMachineConfigPool.status.available', rules: ['POOL-5'], doc: 'entries no live HCSMachine holds' },
  { field: 'HCSMachineConfigPool.status.entries[].hostname', rules: ['POOL-5'], doc: 'one entry per spec.configs[] hostname' },
  { field: 'HCSMachineConfigPool.status.entries[].machine', rules: ['POOL-4', 'POOL-5'], doc: 'the HCSMachine holding the entry (absent: free)' },
  { field: 'HCSMachineConfigPool.status.entries[].acceptedDisks', rules: ['DISK-4'], doc: 'the persistent disks as first accepted' },
  { field: 'HCSMachineConfigPool.status.entries[].persistentDisks[].phase', rules: ['POOL-5'], doc: 'Pending, Creating, Available, Attaching, Attached, Detaching, Error' },
  { field: 'HCSCluster.status.ready', rules: ['NET-4', 'UPG-1'], doc: 'Cluster API infrastructure contract' },
  {
    field: 'HCSCluster.status.failureDomains',
    rules: ['KCP-2', 'TPL-2'],
    doc: 'optional: one {controlPlane: true} entry per spec.controlPlaneAvailabilityZones zone HCS lists as available; copied to Cluster.status.failureDomains; servers and their disks go to Machine.spec.failureDomain',
  },
];

/** Metadata keys on cloud resources that contract checks and the guest read. */
export const CONTRACT_METADATA: readonly { key: string; on: 'server' | 'volume'; rules: readonly string[]; doc: string }[] = [
  { key: META_CLUSTER, on: 'volume', rules: ['DISK-3'], doc: 'the Cluster name' },
  { key: META_HOSTNAME, on: 'volume', rules: ['DISK-3'], doc: 'the pool entry hostname: with hcs.io/slot, the identity of a persistent disk' },
  { key: META_SLOT, on: 'volume', rules: ['DISK-3'], doc: 'the persistentDisks[].slot (decimal)' },
  { key: META_PERSISTENT, on: 'volume', rules: ['DISK-9', 'TPL-3'], doc: '"true" on every persistent disk (never deleted; everything else must not outlive its server)' },
  { key: META_PERSISTENT_VOLUMES, on: 'server', rules: ['DISK-6'], doc: 'comma-separated ids of the persistent volumes in the server\'s cloud-init (a disk not listed is not hot-attached)' },
  { key: META_CLUSTER, on: 'server', rules: ['BOOT-2'], doc: 'the Cluster the guest joins (its CA: Secret <cluster>-ca)' },
  { key: META_HOSTNAME, on: 'server', rules: ['POOL-4', 'BOOT-2'], doc: 'the pool entry hostname (the guest\'s node name; default: the server name)' },
  { key: META_IMAGE_NAME, on: 'server', rules: ['BOOT-4'], doc: 'the image name (the guest looks up the Kubernetes version it carries)' },
  { key: META_NAMESPACE, on: 'server', rules: ['BOOT-2'], doc: 'namespace of that Cluster' },
  { key: META_K8S_VERSION, on: 'server', rules: ['BOOT-4'], doc: 'Machine.spec.version (the guest refuses to join when the image carries another)' },
  { key: META_IMAGE_K8S_VERSION, on: 'server', rules: ['BOOT-4'], doc: 'the Kubernetes version IMS reports for the image (__support_kubernetes_version)' },
];

const RULE_ID = /^[A-Z]+-\d+$/;

/** True when `s` is a rule ID such as DISK-8. */
export function isRuleId(s: unknown): boolean {
  return typeof s === 'string' && RULE_ID.test(s);
}

/** Drop `keys` from `p`. */
export function without(p: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) if (!keys.includes(k)) out[k] = v;
  return out;
}

/** A reference verdict, with the contract core when dropping `keys` leaves one. */
export function reference(why: string, core?: Record<string, unknown>): Classification {
  return core ? { tier: 'reference', why, core } : { tier: 'reference', why };
}

/**
 * A kubectl step's expected output: `kubectl logs deployment/hcs-controller-manager` reads the reference provider's
 * log wording; `kubectl describe` of a provider object prints its condition messages and Events as the reference
 * provider words them. Everything else (get, -o yaml/jsonpath, apply, patch, annotate) reads objects: contract.
 */
export function kubectlTier(command: string, expectsOutput: boolean): Classification {
  const words = command.replace(/\\\n/g, ' ').trim().split(/\s+/);
  const verb = words[1];
  if (verb === 'logs') return reference('kubectl logs: the reference provider\'s log wording');
  if (verb === 'describe' && expectsOutput && /^hcs/i.test(words[2] ?? '')) return reference('kubectl describe of a provider object: its condition messages and Events as the reference provider words them');
  return CONTRACT;
}
