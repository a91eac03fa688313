/**
 * HCS provider types (infrastructure.cluster.x-k8s.io/v1beta1), as the
 * procedure documents use them (seeds/000, seeds/004; SPEC TPL-1, POOL-1, DISK-1).
 */
import type { Condition, ObjectReference } from './capi.js';
import type { Typed } from '../../core/kube/types.js';

export const INFRA_VERSION = 'infrastructure.cluster.x-k8s.io/v1beta1';
export const FINALIZER_HCSMACHINE = 'hcsmachine.infrastructure.cluster.x-k8s.io';
export const FINALIZER_HCSCLUSTER = 'hcscluster.infrastructure.cluster.x-k8s.io';

export interface HCSSubnet {
  name?: string;
  id?: string;
  cidr?: string;
}

export interface HCSClusterSpec {
  network?: { vpc?: { name?: string; id?: string }; subnets?: HCSSubnet[] };
  controlPlaneEndpoint?: { host: string; port: number };
  identityRef?: { kind?: string; name: string };
  project?: string;
  region?: string;
  /**
   * The availability zones control plane Machines are spread over (as CAPO's OpenStackCluster
   * spec.controlPlaneAvailabilityZones): each one that the cloud lists as available
   * (NovaListAvailabilityZones) becomes a failure domain in status.failureDomains. Unset: no failure domains.
   */
  controlPlaneAvailabilityZones?: string[];
}
export interface HCSClusterStatus {
  ready?: boolean;
  /** Cluster API infrastructure contract: copied to Cluster.status.failureDomains. */
  failureDomains?: Record<string, { controlPlane?: boolean; attributes?: Record<string, string> }>;
  network?: { subnets?: HCSSubnet[] };
  failureReason?: string;
  failureMessage?: string;
  conditions?: Condition[];
}
export type HCSCluster = Typed<HCSClusterSpec, HCSClusterStatus>;

export interface VolumeSpec {
  type: string;
  size: number;
}
export interface DataVolume {
  size: number;
  type: string;
  mountPath: string;
  format: string;
}

export interface HCSMachineSpec {
  imageName: string;
  flavorName: string;
  availabilityZone: string;
  rootVolume?: VolumeSpec;
  configPoolRef?: ObjectReference;
  dataVolumes?: DataVolume[];
  /** Runtime identity, set by the provider on the HCSMachine; must be empty in templates (TPL-4). */
  providerID?: string;
  serverId?: string;
}
export interface HCSMachineStatus {
  ready?: boolean;
  addresses?: { type: string; address: string }[];
  /** The pool entry (hostname) this machine holds (POOL-4). */
  hostname?: string;
  serverStatus?: string;
  failureReason?: string;
  failureMessage?: string;
  conditions?: Condition[];
}
export type HCSMachine = Typed<HCSMachineSpec, HCSMachineStatus>;
export type HCSMachineTemplate = Typed<{ template: { metadata?: { labels?: Record<string, string> }; spec: HCSMachineSpec } }>;

export interface PoolNetwork {
  subnetName?: string;
  /** Legacy spelling accepted for old manifests (NET-2). */
  subenetName?: string;
  subnetId?: string;
  ipAddress: string;
}
export interface PersistentDisk {
  slot: number;
  size: number;
  type: string;
  mountPath: string;
  format: string;
  mountOptions?: string[];
}
export interface PoolConfig {
  hostname: string;
  networks: PoolNetwork[];
  persistentDisks?: PersistentDisk[];
}
export interface HCSMachineConfigPoolSpec {
  configs: PoolConfig[];
}
export interface PersistentDiskStatus {
  slot: number;
  volumeId?: string;
  /** Pending (not created yet), Creating, Available (detached), Attaching, Attached, Detaching, Error. */
  phase: string;
  attachedServerId?: string;
  mountPath: string;
  lastTransitionTime?: string;
  message?: string;
}
export interface PoolEntryStatus {
  hostname: string;
  /** Name of the HCSMachine bound to this entry, if any (POOL-4). */
  machine?: string;
  /** Disks as the provider accepted them (DISK-4 compares against these). */
  acceptedDisks?: PersistentDisk[];
  persistentDisks?: PersistentDiskStatus[];
}
export interface HCSMachineConfigPoolStatus {
  total?: number;
  available?: number;
  entries?: PoolEntryStatus[];
  conditions?: Condition[];
  observedGeneration?: number;
}
export type HCSMachineConfigPool = Typed<HCSMachineConfigPoolSpec, HCSMachineConfigPoolStatus>;

export { persistentDiskIdentity } from './metadata.js';
