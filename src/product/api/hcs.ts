/**
 * HCS provider resources (infrastructure.cluster.x-k8s.io/v1beta1), as the
 * procedure documents use them (seeds/000, seeds/004; TPL-1, POOL-1, DISK-1):
 * each described once in the schema language of src/core/kube/schema-dsl.ts,
 * from which come both the CRD schemas (crds/definitions.ts) and the types
 * the code reads (`Infer<...>`). Admission (admission.ts, beside this file)
 * enforces the rules that make fields mandatory, naming the rule, so the
 * schema keeps them optional as the documents say; those fields are `assured`
 * here: the type requires them.
 */
import * as s from '../../core/kube/schema-dsl.js';
import type { Infer } from '../../core/kube/schema-dsl.js';
import type { Typed } from '../../core/kube/types.js';
import { conditions, failureDomains, objectMetaTemplate } from './crds/shared.js';

export const INFRA_VERSION = 'infrastructure.cluster.x-k8s.io/v1beta1';
export const FINALIZER_HCSMACHINE = 'hcsmachine.infrastructure.cluster.x-k8s.io';
export const FINALIZER_HCSCLUSTER = 'hcscluster.infrastructure.cluster.x-k8s.io';

const ADMISSION = 'admission (src/product/api/admission.ts) refuses an object without them, naming the rule';
const PROVIDER = 'the provider writes this status and always sets them';

// ---------------------------------------------------------------- HCSCluster

const subnet = s.object({ name: s.string('Subnet name in the VPC.'), id: s.string('Subnet ID (required when appending to a Ready cluster, NET-5).'), cidr: s.string('Subnet CIDR.') });

export const hcsClusterSpec = s.object({
  network: s.object({ vpc: s.object({ name: s.string(), id: s.string() }), subnets: s.array(subnet, 'Subnets machines may use (NET-4, NET-5).') }),
  controlPlaneEndpoint: s.object({ host: s.string(), port: s.int() }, { required: ['host', 'port'] }),
  identityRef: s.object({ kind: s.string(), name: s.string() }, { required: ['name'] }),
  project: s.string(),
  region: s.string(),
  /**
   * The availability zones control plane Machines are spread over (as CAPO's OpenStackCluster
   * spec.controlPlaneAvailabilityZones): each one that the cloud lists as available
   * (NovaListAvailabilityZones) becomes a failure domain in status.failureDomains. Unset: no failure domains.
   */
  controlPlaneAvailabilityZones: s.array(
    s.string(),
    'Availability zones control plane Machines are spread over: each one the cloud lists as available becomes a failure domain (status.failureDomains). Unset: none.',
  ),
});

export const hcsClusterStatus = s.object({
  ready: s.bool(),
  network: s.object({ subnets: s.array(subnet) }),
  /** Cluster API infrastructure contract: copied to Cluster.status.failureDomains. */
  failureDomains,
  failureReason: s.string(),
  failureMessage: s.string(),
  conditions,
});

export type HCSSubnet = Infer<typeof subnet>;
export type HCSClusterSpec = Infer<typeof hcsClusterSpec>;
export type HCSClusterStatus = Infer<typeof hcsClusterStatus>;
export type HCSCluster = Typed<HCSClusterSpec, HCSClusterStatus>;

// ---------------------------------------------------------------- HCSMachine, HCSMachineTemplate

const volume = s.object({ type: s.string('EVS volume type (e.g. SSD).'), size: s.int('Size in GiB.', { minimum: 1 }) });
export const dataVolume = s.object(
  {
    size: s.int('Size in GiB.', { minimum: 1 }),
    type: s.string('EVS volume type.'),
    mountPath: s.string('Mount path in the guest.'),
    format: s.string('Filesystem (xfs, ext4).'),
  },
  {
    assured: ['size', 'type', 'mountPath', 'format'],
    assuredBy: `${ADMISSION} (TPL-3)`,
    description: 'An ephemeral data volume, created and deleted with each ECS (TPL-3). size, type, mountPath and format are required when dataVolumes is given.',
  },
);

export const hcsMachineSpec = s.object(
  {
    imageName: s.string('IMS image name; must exist in HCS (TPL-6).'),
    flavorName: s.string('ECS flavor, the provider API value (not the tenant UI name, TPL-2).'),
    availabilityZone: s.string('Availability zone, the provider API value (TPL-2).'),
    rootVolume: volume,
    configPoolRef: s.object({ name: s.string('Name of the HCSMachineConfigPool in the same namespace.'), namespace: s.string(), kind: s.string(), apiVersion: s.string() }),
    dataVolumes: s.array(dataVolume),
    /** Runtime identity, set by the provider on the HCSMachine; must be empty in templates (TPL-4). */
    providerID: s.string('Runtime identity, hcs://<cluster-name>/<machine-name>; set by the provider, must be empty in templates (TPL-4).'),
    serverId: s.string('ECS instance ID; set by the provider, must be empty in templates (TPL-4).'),
  },
  { assured: ['imageName', 'flavorName', 'availabilityZone'], assuredBy: `${ADMISSION} (TPL-1)`, description: 'HCSMachineSpec: the VM specification (TPL-1).' },
);

export const hcsMachineStatus = s.object({
  ready: s.bool(),
  addresses: s.array(s.object({ type: s.string(), address: s.string() }, { required: ['type', 'address'] })),
  /** The pool entry (hostname) this machine holds (POOL-4). */
  hostname: s.string('The pool entry this machine holds (POOL-4).'),
  serverStatus: s.string('ECS status (BUILD, ACTIVE, ...).'),
  failureReason: s.string(),
  failureMessage: s.string(),
  conditions,
});

/** TPL-4 as CEL: a template carries no runtime identity (HCSMachine itself does). */
const templateMachineSpec = s.withExtra(hcsMachineSpec, {
  'x-kubernetes-validations': (['providerID', 'serverId'] as const).map((k) => ({
    rule: `!has(self.${k}) || self.${k} == ''`,
    message: 'TPL-4: runtime identity field must be empty in a template (the provider sets it on each HCSMachine); remove it from the copied manifest',
    reason: 'FieldValueForbidden' as const,
    fieldPath: `.${k}`,
  })),
});

export const hcsMachineTemplateSpec = s.object({ template: s.object({ metadata: objectMetaTemplate, spec: templateMachineSpec }, { required: ['spec'] }) }, { required: ['template'] });

export type VolumeSpec = Infer<typeof volume>;
export type DataVolume = Infer<typeof dataVolume>;
export type HCSMachineSpec = Infer<typeof hcsMachineSpec>;
export type HCSMachineStatus = Infer<typeof hcsMachineStatus>;
export type HCSMachine = Typed<HCSMachineSpec, HCSMachineStatus>;
export type HCSMachineTemplate = Typed<Infer<typeof hcsMachineTemplateSpec>>;

// ---------------------------------------------------------------- HCSMachineConfigPool

export const persistentDisk = s.object(
  {
    slot: s.int('Slot index; per hostname unique and contiguous from 0 (DISK-2).'),
    size: s.int('Size in GiB.'),
    type: s.string('EVS volume type.'),
    mountPath: s.string('Mount path in the guest.'),
    format: s.string('Filesystem.'),
    mountOptions: s.array(s.string(), 'Mount options; may change, effective on replacement (DISK-5).'),
  },
  {
    assured: ['slot', 'size', 'type', 'mountPath', 'format'],
    assuredBy: `${ADMISSION} (DISK-1)`,
    description: 'A pool-managed persistent disk identified by (hostname, slot) (DISK-3). slot, size, type, mountPath and format are required (DISK-1).',
  },
);

export const poolNetwork = s.object(
  {
    subnetName: s.string('Subnet name; listed in HCSCluster.spec.network.subnets (NET-4). Set subnetName or subnetId, not both (NET-1).', { maxLength: 255 }),
    /** Legacy spelling accepted for old manifests (NET-2). */
    subenetName: s.string('Deprecated legacy spelling of subnetName; accepted for existing manifests (NET-2).', { maxLength: 255 }),
    subnetId: s.string('Subnet ID.', { maxLength: 255 }),
    ipAddress: s.string('Static IPv4 address of this NIC (NET-7).', { maxLength: 64 }),
  },
  {
    assured: ['ipAddress'],
    assuredBy: `${ADMISSION} (NET-7)`,
    description: 'One NIC: one subnet selector plus one static IP (NET-6).',
    extra: {
      // Unknown per-NIC fields (gateway, routes, dns, ...) reach admission, which
      // rejects them naming NET-6, instead of being pruned silently.
      'x-kubernetes-preserve-unknown-fields': true,
      // The subnet-selector rules, for a real apiserver (src/product/api/admission.ts enforces them on the embedded store).
      'x-kubernetes-validations': [
        { rule: '!(has(self.subnetName) && has(self.subnetId))', message: 'NET-1: set subnetName or subnetId, not both', reason: 'FieldValueForbidden', fieldPath: '.subnetId' },
        { rule: 'has(self.subnetName) || has(self.subenetName) || has(self.subnetId)', message: 'NET-1: one subnet selector (subnetName or subnetId)', reason: 'FieldValueRequired' },
        {
          rule: '!has(self.subenetName) || !has(self.subnetName) || self.subenetName == self.subnetName',
          messageExpression: "'NET-2: must equal the legacy subenetName \"' + self.subenetName + '\"'",
          fieldPath: '.subnetName',
        },
        { rule: '!(has(self.subenetName) && has(self.subnetId))', message: 'NET-3: conflicting subnet selectors (subenetName and subnetId)', reason: 'FieldValueForbidden', fieldPath: '.subnetId' },
      ],
    },
  },
);

// Bounds so that a real apiserver can cost the CEL rules (unbounded lists are
// estimated at the request size limit and the rules would be refused).
// (DISK-2's rules are quadratic in the disks of an entry and run once per entry:
// 1024 entries x 16 disks is about half the apiserver's per-rule budget.)
const MAX_POOL_ENTRIES = 1024;
const MAX_NICS = 16;
const MAX_PERSISTENT_DISKS = 16;

/** DISK-2 as CEL: slots unique per hostname, non-negative and contiguous from 0. */
const poolDisks = s.array(persistentDisk, undefined, {
  maxItems: MAX_PERSISTENT_DISKS,
  'x-kubernetes-validations': [
    { rule: 'self.all(d, !has(d.slot) || self.filter(e, has(e.slot) && e.slot == d.slot).size() == 1)', message: 'DISK-2: slots must be unique per hostname' },
    { rule: 'self.all(d, !has(d.slot) || (d.slot >= 0 && d.slot < self.filter(e, has(e.slot)).size()))', message: 'DISK-2: slots must be non-negative and contiguous from 0 per hostname' },
  ],
});

export const poolConfig = s.object(
  { hostname: s.string('Hostname of the machine bound to this entry.'), networks: s.array(poolNetwork, undefined, { maxItems: MAX_NICS }), persistentDisks: poolDisks },
  { assured: ['hostname', 'networks'], assuredBy: `${ADMISSION} (POOL-1)` },
);

export const hcsMachineConfigPoolSpec = s.object(
  { configs: s.array(poolConfig, 'One entry per machine (POOL-1).', { maxItems: MAX_POOL_ENTRIES }) },
  { assured: ['configs'], assuredBy: `${ADMISSION} (POOL-1)` },
);

const persistentDiskStatus = s.object(
  {
    slot: s.int(),
    volumeId: s.string(),
    /** Pending (not created yet), Creating, Available (detached), Attaching, Attached, Detaching, Error. */
    phase: s.string('Pending, Creating, Available, Attaching, Attached, Detaching, Error.'),
    attachedServerId: s.string(),
    mountPath: s.string(),
    lastTransitionTime: s.dateTime(),
    message: s.string(),
  },
  { assured: ['slot', 'phase', 'mountPath'], assuredBy: PROVIDER },
);

const poolEntryStatus = s.object(
  {
    hostname: s.string(),
    /** Name of the HCSMachine bound to this entry, if any (POOL-4). */
    machine: s.string('HCSMachine bound to this entry (POOL-4).'),
    /** Disks as the provider accepted them (DISK-4 compares against these). */
    acceptedDisks: s.array(persistentDisk, 'Disks as the provider accepted them (DISK-4).'),
    persistentDisks: s.array(persistentDiskStatus),
  },
  { assured: ['hostname'], assuredBy: PROVIDER },
);

export const hcsMachineConfigPoolStatus = s.object({
  total: s.int(),
  available: s.int(),
  observedGeneration: s.int64(),
  entries: s.array(poolEntryStatus),
  conditions,
});

export type PoolNetwork = Infer<typeof poolNetwork>;
export type PersistentDisk = Infer<typeof persistentDisk>;
export type PoolConfig = Infer<typeof poolConfig>;
export type HCSMachineConfigPoolSpec = Infer<typeof hcsMachineConfigPoolSpec>;
export type PersistentDiskStatus = Infer<typeof persistentDiskStatus>;
export type PoolEntryStatus = Infer<typeof poolEntryStatus>;
export type HCSMachineConfigPoolStatus = Infer<typeof hcsMachineConfigPoolStatus>;
export type HCSMachineConfigPool = Typed<HCSMachineConfigPoolSpec, HCSMachineConfigPoolStatus>;

export { persistentDiskIdentity } from './metadata.js';
