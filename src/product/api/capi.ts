/**
 * Cluster API v1beta1 types (cluster.x-k8s.io, bootstrap.cluster.x-k8s.io,
 * controlplane.cluster.x-k8s.io): the fields the testbed models.
 * Source: kubernetes-sigs/cluster-api api/v1beta1/*_types.go.
 */
import type { KubeObject, Typed } from '../../core/kube/types.js';

export const CAPI_GROUP = 'cluster.x-k8s.io';
export const CAPI_VERSION = 'cluster.x-k8s.io/v1beta1';
export const BOOTSTRAP_VERSION = 'bootstrap.cluster.x-k8s.io/v1beta1';
export const CONTROLPLANE_VERSION = 'controlplane.cluster.x-k8s.io/v1beta1';

// Well-known labels and annotations (cluster-api api/v1beta1/common_types.go).
export const LABEL_CLUSTER_NAME = 'cluster.x-k8s.io/cluster-name';
export const LABEL_DEPLOYMENT_NAME = 'cluster.x-k8s.io/deployment-name';
export const LABEL_SET_NAME = 'cluster.x-k8s.io/set-name';
export const LABEL_MACHINE_TEMPLATE_HASH = 'machine-template-hash';
export const LABEL_CONTROL_PLANE = 'cluster.x-k8s.io/control-plane';
export const ANNOTATION_REVISION = 'machinedeployment.clusters.x-k8s.io/revision';
export const ANNOTATION_DESIRED_REPLICAS = 'machinedeployment.clusters.x-k8s.io/desired-replicas';
export const ANNOTATION_MAX_REPLICAS = 'machinedeployment.clusters.x-k8s.io/max-replicas';
export const ANNOTATION_DELETE_MACHINE = 'cluster.x-k8s.io/delete-machine';
export const ANNOTATION_CLONED_FROM_NAME = 'cluster.x-k8s.io/cloned-from-name';
/** The expiry of a control plane Machine's certificates, RFC 3339 (api/v1beta1/machine_types.go MachineCertificatesExpiryDateAnnotation); KCP writes it on the KubeadmConfig. */
export const ANNOTATION_CERTIFICATES_EXPIRY = 'machine.cluster.x-k8s.io/certificates-expiry';
export const ANNOTATION_CLONED_FROM_GROUPKIND = 'cluster.x-k8s.io/cloned-from-groupkind';
export const FINALIZER_MACHINE = 'machine.cluster.x-k8s.io';
export const FINALIZER_CLUSTER = 'cluster.cluster.x-k8s.io';
/** clusterv1.ClusterSecretType: the type of the Secrets Cluster API writes for a cluster (kubeconfig, CA, bootstrap data). */
export const SECRET_TYPE_CLUSTER = 'cluster.x-k8s.io/secret';
/** util/secret KubeconfigDataName: the key of the kubeconfig in `<cluster>-kubeconfig`. */
export const KUBECONFIG_DATA_KEY = 'value';
/** util/secret: the Secret Cluster API keeps a workload cluster's admin kubeconfig in. */
export function kubeconfigSecretName(cluster: string): string {
  return `${cluster}-kubeconfig`;
}
/**
 * The testbed's record, in each workload cluster, of what its control plane
 * actually runs (KCP-3): written by the KubeadmControlPlane model, read by the
 * provider's version checks (src/product/provider/clusterworkload.ts).
 */
export const CONTROL_PLANE_CONFIGMAP = { namespace: 'kube-system', name: 'testbed-control-plane' };

export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  name: string;
  namespace?: string;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  severity?: 'Error' | 'Warning' | 'Info' | '';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

// ---- Cluster -----------------------------------------------------------------

export interface ClusterSpec {
  paused?: boolean;
  clusterNetwork?: { pods?: { cidrBlocks: string[] }; services?: { cidrBlocks: string[] }; serviceDomain?: string };
  controlPlaneEndpoint?: { host: string; port: number };
  controlPlaneRef?: ObjectReference;
  infrastructureRef?: ObjectReference;
}
/** v1beta1 FailureDomainSpec: whether control plane Machines may be placed there, and provider attributes. */
export interface FailureDomainSpec {
  controlPlane?: boolean;
  attributes?: Record<string, string>;
}
/** v1beta1 FailureDomains: failure domain name -> spec (Cluster.status.failureDomains, copied from the infrastructure cluster's). */
export type FailureDomains = Record<string, FailureDomainSpec>;

export interface ClusterStatus {
  phase?: 'Pending' | 'Provisioning' | 'Provisioned' | 'Deleting' | 'Failed' | 'Unknown';
  infrastructureReady?: boolean;
  controlPlaneReady?: boolean;
  failureDomains?: FailureDomains;
  conditions?: Condition[];
  observedGeneration?: number;
}
export type Cluster = Typed<ClusterSpec, ClusterStatus>;

// ---- Machine -----------------------------------------------------------------

export interface Bootstrap {
  configRef?: ObjectReference;
  dataSecretName?: string;
}
export interface MachineSpec {
  clusterName: string;
  bootstrap: Bootstrap;
  infrastructureRef: ObjectReference;
  version?: string;
  providerID?: string;
  failureDomain?: string;
  nodeDrainTimeout?: string;
  nodeVolumeDetachTimeout?: string;
  nodeDeletionTimeout?: string;
}
export type MachinePhase = 'Pending' | 'Provisioning' | 'Provisioned' | 'Running' | 'Deleting' | 'Deleted' | 'Failed' | 'Unknown';
export interface MachineAddress {
  type: 'Hostname' | 'ExternalIP' | 'InternalIP' | 'ExternalDNS' | 'InternalDNS';
  address: string;
}
export interface MachineStatus {
  nodeRef?: { kind: 'Node'; name: string; uid?: string; apiVersion?: string };
  nodeInfo?: { kubeletVersion: string };
  lastUpdated?: string;
  failureReason?: string;
  failureMessage?: string;
  addresses?: MachineAddress[];
  phase?: MachinePhase;
  bootstrapReady?: boolean;
  infrastructureReady?: boolean;
  observedGeneration?: number;
  /** Control plane Machines: when their certificates expire (RFC 3339), from the certificates-expiry annotation. */
  certificatesExpiryDate?: string;
  conditions?: Condition[];
}
export type Machine = Typed<MachineSpec, MachineStatus>;

export interface MachineTemplateSpec {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: MachineSpec;
}

// ---- MachineSet --------------------------------------------------------------

export type DeletePolicy = 'Random' | 'Newest' | 'Oldest';
export interface MachineSetSpec {
  clusterName: string;
  replicas?: number;
  minReadySeconds?: number;
  deletePolicy?: DeletePolicy;
  selector: { matchLabels?: Record<string, string> };
  template: MachineTemplateSpec;
}
export interface MachineSetStatus {
  selector?: string;
  replicas?: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  observedGeneration?: number;
  failureReason?: string;
  failureMessage?: string;
  conditions?: Condition[];
}
export type MachineSet = Typed<MachineSetSpec, MachineSetStatus>;

// ---- MachineDeployment -------------------------------------------------------

export type IntOrString = number | string;
export interface MachineDeploymentStrategy {
  type?: 'RollingUpdate' | 'OnDelete';
  rollingUpdate?: { maxUnavailable?: IntOrString; maxSurge?: IntOrString; deletePolicy?: DeletePolicy };
}
export interface MachineDeploymentSpec {
  clusterName: string;
  replicas?: number;
  selector?: { matchLabels?: Record<string, string> };
  template: MachineTemplateSpec;
  strategy?: MachineDeploymentStrategy;
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  paused?: boolean;
  progressDeadlineSeconds?: number;
  /** RFC 3339 time: once reached, Machines created before it are rolled out (upstream mdutil.FindNewMachineSet). */
  rolloutAfter?: string;
}
export interface MachineDeploymentStatus {
  observedGeneration?: number;
  selector?: string;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  phase?: 'ScalingUp' | 'ScalingDown' | 'Running' | 'Failed' | 'Unknown';
  conditions?: Condition[];
}
export type MachineDeployment = Typed<MachineDeploymentSpec, MachineDeploymentStatus>;

// ---- Bootstrap (kubeadm) -----------------------------------------------------

export interface BootstrapFile {
  path: string;
  owner?: string;
  permissions?: string;
  encoding?: 'base64' | 'gzip' | 'gzip+base64';
  content?: string;
  append?: boolean;
}
export interface NodeRegistration {
  name?: string;
  kubeletExtraArgs?: Record<string, string>;
  taints?: { key: string; value?: string; effect: string }[];
}
export interface KubeadmConfigSpec {
  files?: BootstrapFile[];
  preKubeadmCommands?: string[];
  postKubeadmCommands?: string[];
  joinConfiguration?: {
    patches?: { directory: string };
    nodeRegistration?: NodeRegistration;
    controlPlane?: Record<string, unknown>;
  };
  initConfiguration?: { patches?: { directory: string }; nodeRegistration?: NodeRegistration };
  clusterConfiguration?: {
    dns?: { imageRepository?: string; imageTag?: string };
    etcd?: { local?: { imageRepository?: string; imageTag?: string; dataDir?: string } };
    imageRepository?: string;
    kubernetesVersion?: string;
  };
  users?: { name: string; sshAuthorizedKeys?: string[] }[];
  format?: 'cloud-config' | 'ignition';
}
export interface KubeadmConfigStatus {
  ready?: boolean;
  dataSecretName?: string;
  failureReason?: string;
  failureMessage?: string;
  observedGeneration?: number;
  conditions?: Condition[];
}
export type KubeadmConfig = Typed<KubeadmConfigSpec, KubeadmConfigStatus>;
export type KubeadmConfigTemplate = Typed<{ template: { metadata?: { labels?: Record<string, string> }; spec: KubeadmConfigSpec } }>;

// ---- KubeadmControlPlane -----------------------------------------------------

export interface KubeadmControlPlaneSpec {
  replicas?: number;
  version: string;
  machineTemplate: {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    infrastructureRef: ObjectReference;
    nodeDrainTimeout?: string;
    nodeDeletionTimeout?: string;
  };
  kubeadmConfigSpec: KubeadmConfigSpec;
  rolloutStrategy?: { type?: 'RollingUpdate'; rollingUpdate?: { maxSurge?: IntOrString } };
}
export interface KubeadmControlPlaneStatus {
  selector?: string;
  replicas?: number;
  version?: string;
  updatedReplicas?: number;
  readyReplicas?: number;
  unavailableReplicas?: number;
  initialized?: boolean;
  ready?: boolean;
  observedGeneration?: number;
  conditions?: Condition[];
}
export type KubeadmControlPlane = Typed<KubeadmControlPlaneSpec, KubeadmControlPlaneStatus>;

export function isKind<T extends KubeObject>(o: KubeObject, kind: string): o is T {
  return o.kind === kind;
}
