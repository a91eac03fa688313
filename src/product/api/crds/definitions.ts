/**
 * The CustomResourceDefinitions of every custom resource of the rule catalogue (docs/rules.md), as
 * TypeScript data: one source of truth that the embedded store validates and
 * prunes against, the HTTP facade serves (discovery, OpenAPI, printer
 * columns) and `npx tsx src/product/api/crds/dump.ts` prints as YAML for a real
 * apiserver.
 *
 * Field lists follow the procedure documents' YAML (seeds/000, seeds/004; the
 * ground truth, including the legacy `subenetName`) and Cluster API v1beta1
 * (api/v1beta1/*_types.go, config/crd/bases) for upstream kinds. Printer
 * columns are upstream's for Cluster API kinds.
 *
 * Required fields: only where upstream's schema requires them. The HCS rules
 * that make fields mandatory (DISK-1, TPL-1, TPL-3, NET-1) are enforced by
 * admission (src/admission) so that the rejection names the SPEC rule; the
 * documents say the CRD schema lists the subnet selectors as optional.
 */
import type { JSONSchemaProps } from '../../../core/kube/schema.js';
import * as s from '../../../core/kube/schema-dsl.js';
import {
  hcsClusterSpec,
  hcsClusterStatus,
  hcsMachineConfigPoolSpec,
  hcsMachineConfigPoolStatus,
  hcsMachineSpec,
  hcsMachineStatus,
  hcsMachineTemplateSpec,
} from '../hcs.js';
import { conditions as sharedConditions, failureDomains as sharedFailureDomains, objectMetaTemplate as sharedObjectMetaTemplate } from './shared.js';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
  format?: string;
}

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    group: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames?: string[]; categories?: string[] };
    scope: 'Namespaced' | 'Cluster';
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: JSONSchemaProps };
      subresources?: { status?: Record<string, never>; scale?: ScaleSubresource };
      additionalPrinterColumns?: PrinterColumn[];
    }[];
  };
}

/** The /scale subresource of a CRD (apiextensions.k8s.io/v1 CustomResourceSubresourceScale). */
interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/**
 * MachineSet, MachineDeployment and KubeadmControlPlane serve /scale, as Cluster API v1.10.10's own CRDs declare
 * (config/crd of core and controlplane, built by tools/capi/build.sh: spec.replicas, status.replicas, status.selector),
 * so `kubectl scale` and autoscalers work on a real kube-apiserver as on the facade (issue 32).
 */
const REPLICAS_SCALE: ScaleSubresource = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' };

// ---- schema builders (the schema language of src/core/kube/schema-dsl.ts, as plain JSON) ---------

const str = (description?: string, extra: Partial<JSONSchemaProps> = {}): JSONSchemaProps => s.string(description, extra).json;
const int = (description?: string, extra: Partial<JSONSchemaProps> = {}): JSONSchemaProps => s.int(description, extra).json;
const bool = (description?: string): JSONSchemaProps => s.bool(description).json;
const obj = (properties: Record<string, JSONSchemaProps>, required?: string[], description?: string): JSONSchemaProps => ({
  type: 'object',
  ...(description ? { description } : {}),
  properties,
  ...(required?.length ? { required } : {}),
});
const arr = (items: JSONSchemaProps, description?: string): JSONSchemaProps => ({ type: 'array', ...(description ? { description } : {}), items });
const strMap = (description?: string): JSONSchemaProps => s.stringMap(description).json;
const intOrString = (description?: string): JSONSchemaProps => s.intOrString(description).json;
const preserved = (description?: string): JSONSchemaProps => s.preserved(description).json;
const dateTime = (description?: string): JSONSchemaProps => s.dateTime(description).json;

const objectReference = (description?: string): JSONSchemaProps =>
  obj(
    {
      apiVersion: str('API version of the referent.'),
      kind: str('Kind of the referent.'),
      name: str('Name of the referent.'),
      namespace: str('Namespace of the referent.'),
      uid: str('UID of the referent.'),
      resourceVersion: str(),
      fieldPath: str(),
    },
    undefined,
    description,
  );

const conditions: JSONSchemaProps = sharedConditions.json;

const objectMetaTemplate = sharedObjectMetaTemplate.json;
const failureDomains = sharedFailureDomains.json;

const root = (spec: JSONSchemaProps, status?: JSONSchemaProps, description?: string): JSONSchemaProps =>
  obj(
    {
      apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
      kind: str('Kind is a string value representing the REST resource this object represents.'),
      metadata: { type: 'object' },
      spec,
      ...(status ? { status } : {}),
    },
    undefined,
    description,
  );

// ---- HCS provider (infrastructure.cluster.x-k8s.io): schemas described in ../hcs.ts ----------

const INFRA = 'infrastructure.cluster.x-k8s.io';
const CAPI = 'cluster.x-k8s.io';
const BOOTSTRAP = 'bootstrap.cluster.x-k8s.io';
const CONTROLPLANE = 'controlplane.cluster.x-k8s.io';
const APP = 'app.alauda.io';

const hcsCluster = crd(INFRA, 'HCSCluster', 'hcsclusters', {
  categories: ['cluster-api'],
  schema: root(hcsClusterSpec.json, hcsClusterStatus.json),
  columns: [
    { name: 'Cluster', type: 'string', jsonPath: ".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']", description: 'Cluster to which this HCSCluster belongs' },
    { name: 'Ready', type: 'string', jsonPath: '.status.ready', description: 'Cluster infrastructure is ready' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});

const hcsMachine = crd(INFRA, 'HCSMachine', 'hcsmachines', {
  categories: ['cluster-api'],
  schema: root(hcsMachineSpec.json, hcsMachineStatus.json),
  columns: [
    { name: 'Cluster', type: 'string', jsonPath: ".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']" },
    { name: 'Hostname', type: 'string', jsonPath: '.status.hostname' },
    { name: 'ServerID', type: 'string', jsonPath: '.spec.serverId' },
    { name: 'ProviderID', type: 'string', jsonPath: '.spec.providerID', priority: 1 },
    { name: 'Ready', type: 'string', jsonPath: '.status.ready' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});

const hcsMachineTemplate = crd(INFRA, 'HCSMachineTemplate', 'hcsmachinetemplates', {
  categories: ['cluster-api'],
  status: false,
  schema: root(hcsMachineTemplateSpec.json),
  columns: [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
});

const hcsMachineConfigPool = crd(INFRA, 'HCSMachineConfigPool', 'hcsmachineconfigpools', {
  categories: ['cluster-api'],
  schema: root(hcsMachineConfigPoolSpec.json, hcsMachineConfigPoolStatus.json),
  columns: [
    { name: 'Total', type: 'integer', jsonPath: '.status.total' },
    { name: 'Available', type: 'integer', jsonPath: '.status.available' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});

// ---- Cluster API core (cluster.x-k8s.io) ------------------------------------

const bootstrap = obj({ configRef: objectReference(), dataSecretName: str() });
const machineSpec = obj(
  {
    clusterName: str('ClusterName is the name of the Cluster this object belongs to.', { minLength: 1, maxLength: 63 }),
    bootstrap,
    infrastructureRef: objectReference(),
    version: str('The Kubernetes version (e.g. v1.31.6).'),
    providerID: str(),
    failureDomain: str(),
    nodeDrainTimeout: str(),
    nodeVolumeDetachTimeout: str(),
    nodeDeletionTimeout: str(),
  },
  ['bootstrap', 'clusterName', 'infrastructureRef'],
);
const machineTemplateSpec = obj({ metadata: objectMetaTemplate, spec: machineSpec });
const labelSelector = obj({
  matchLabels: strMap(),
  matchExpressions: arr(obj({ key: str(), operator: str(), values: arr(str()) }, ['key', 'operator'])),
});
const deletePolicy = str(undefined, { enum: ['Random', 'Newest', 'Oldest'] });

const cluster = crd(CAPI, 'Cluster', 'clusters', {
  shortNames: ['cl'],
  categories: ['cluster-api'],
  schema: root(
    obj({
      paused: bool(),
      clusterNetwork: obj({
        apiServerPort: int(),
        pods: obj({ cidrBlocks: arr(str()) }, ['cidrBlocks']),
        services: obj({ cidrBlocks: arr(str()) }, ['cidrBlocks']),
        serviceDomain: str(),
      }),
      controlPlaneEndpoint: obj({ host: str(), port: int() }, ['host', 'port']),
      controlPlaneRef: objectReference(),
      infrastructureRef: objectReference(),
      topology: preserved('Managed topology (ClusterClass); not modelled by the testbed.'),
    }),
    obj({
      phase: str(),
      infrastructureReady: bool(),
      controlPlaneReady: bool(),
      failureDomains,
      failureReason: str(),
      failureMessage: str(),
      observedGeneration: { type: 'integer', format: 'int64' },
      conditions,
    }),
  ),
  columns: [
    { name: 'ClusterClass', type: 'string', jsonPath: '.spec.topology.class', description: 'ClusterClass of this Cluster, empty if the Cluster is not using a ClusterClass' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Cluster status such as Pending/Provisioning/Provisioned/Deleting/Failed' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time duration since creation of Cluster' },
    { name: 'Version', type: 'string', jsonPath: '.spec.topology.version', description: 'Kubernetes version associated with this Cluster' },
  ],
});

const machine = crd(CAPI, 'Machine', 'machines', {
  shortNames: ['ma'],
  categories: ['cluster-api'],
  schema: root(
    machineSpec,
    obj({
      nodeRef: objectReference(),
      nodeInfo: preserved(),
      lastUpdated: dateTime(),
      failureReason: str(),
      failureMessage: str(),
      addresses: arr(obj({ type: str(), address: str() }, ['address', 'type'])),
      phase: str(),
      bootstrapReady: bool(),
      infrastructureReady: bool(),
      observedGeneration: { type: 'integer', format: 'int64' },
      certificatesExpiryDate: dateTime(),
      conditions,
    }),
  ),
  columns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'Cluster' },
    { name: 'NodeName', type: 'string', jsonPath: '.status.nodeRef.name', description: 'Node name associated with this machine' },
    { name: 'ProviderID', type: 'string', jsonPath: '.spec.providerID', description: 'Provider ID' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Machine status such as Terminating/Pending/Running/Failed etc' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time duration since creation of Machine' },
    { name: 'Version', type: 'string', jsonPath: '.spec.version', description: 'Kubernetes version associated with this Machine' },
  ],
});

const replicaStatus = {
  selector: str(),
  replicas: int(),
  fullyLabeledReplicas: int(),
  readyReplicas: int(),
  availableReplicas: int(),
  updatedReplicas: int(),
  unavailableReplicas: int(),
  observedGeneration: { type: 'integer', format: 'int64' } as JSONSchemaProps,
  failureReason: str(),
  failureMessage: str(),
  phase: str(),
  conditions,
};

const machineSet = crd(CAPI, 'MachineSet', 'machinesets', {
  scale: REPLICAS_SCALE,
  shortNames: ['ms'],
  categories: ['cluster-api'],
  schema: root(
    obj(
      {
        clusterName: str(undefined, { minLength: 1, maxLength: 63 }),
        replicas: int(),
        minReadySeconds: int(),
        deletePolicy,
        selector: labelSelector,
        template: machineTemplateSpec,
      },
      ['clusterName', 'selector'],
    ),
    obj(replicaStatus),
  ),
  columns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName' },
    { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Replicas', type: 'integer', jsonPath: '.status.replicas' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
    { name: 'Available', type: 'integer', jsonPath: '.status.availableReplicas' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    { name: 'Version', type: 'string', jsonPath: '.spec.template.spec.version' },
  ],
});

const machineDeployment = crd(CAPI, 'MachineDeployment', 'machinedeployments', {
  scale: REPLICAS_SCALE,
  shortNames: ['md'],
  categories: ['cluster-api'],
  schema: root(
    obj(
      {
        clusterName: str(undefined, { minLength: 1, maxLength: 63 }),
        replicas: int('Number of desired machines.', { minimum: 0 }),
        selector: labelSelector,
        template: machineTemplateSpec,
        strategy: obj({
          type: str('RollingUpdate or OnDelete.', { enum: ['RollingUpdate', 'OnDelete'] }),
          rollingUpdate: {
            ...obj({
              maxUnavailable: intOrString('Absolute number or percentage of unavailable machines during the update (MD-1).'),
              maxSurge: intOrString('Absolute number or percentage of machines above the desired number (MD-1, MD-2).'),
              deletePolicy,
            }),
            // MD-1 as CEL (src/world/capi/admission.ts on the embedded store, where the defaulting webhook
            // sets maxSurge 1 / maxUnavailable 0: an absent maxSurge is not zero, an absent maxUnavailable is).
            'x-kubernetes-validations': [
              ...(['maxSurge', 'maxUnavailable'] as const).map((k) => ({
                rule: `!has(self.${k}) || (type(self.${k}) == int ? int(self.${k}) >= 0 : string(self.${k}).matches('^[0-9]+%$'))`,
                message: 'MD-1: must be either an int or a percentage (a string must end in %)',
                fieldPath: `.${k}`,
              })),
              {
                rule: "!(has(self.maxSurge) && (type(self.maxSurge) == int ? int(self.maxSurge) == 0 : string(self.maxSurge) in ['0', '0%']) && (!has(self.maxUnavailable) || (type(self.maxUnavailable) == int ? int(self.maxUnavailable) == 0 : string(self.maxUnavailable) in ['0', '0%'])))",
                message: 'MD-1: maxSurge and maxUnavailable cannot both be zero',
              },
            ],
          },
        }),
        minReadySeconds: int(),
        revisionHistoryLimit: int(),
        paused: bool(),
        progressDeadlineSeconds: int(),
        rolloutAfter: dateTime('Roll out every Machine created before this time (MachineDeployment spec.rolloutAfter).'),
      },
      ['clusterName', 'template'],
    ),
    obj(replicaStatus),
  ),
  columns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'Cluster' },
    { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas', description: 'Total number of machines desired by this MachineDeployment' },
    { name: 'Replicas', type: 'integer', jsonPath: '.status.replicas', description: 'Total number of non-terminated machines targeted by this MachineDeployment' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Total number of ready machines targeted by this MachineDeployment' },
    { name: 'Updated', type: 'integer', jsonPath: '.status.updatedReplicas', description: 'Total number of non-terminated machines targeted by this deployment that have the desired template spec' },
    { name: 'Unavailable', type: 'integer', jsonPath: '.status.unavailableReplicas', description: 'Total number of unavailable machines targeted by this MachineDeployment' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'MachineDeployment status such as ScalingUp/ScalingDown/Running/Failed/Unknown' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time duration since creation of MachineDeployment' },
    { name: 'Version', type: 'string', jsonPath: '.spec.template.spec.version', description: 'Kubernetes version associated with this MachineDeployment' },
  ],
});

// ---- kubeadm bootstrap and control plane -------------------------------------

const nodeRegistration = obj({
  name: str(),
  criSocket: str(),
  kubeletExtraArgs: strMap('Extra kubelet flags (e.g. volume-plugin-dir).'),
  taints: arr(obj({ key: str(), value: str(), effect: str(), timeAdded: dateTime() }, ['effect', 'key'])),
  ignorePreflightErrors: arr(str()),
  imagePullPolicy: str(),
});
const patches = obj({ directory: str('Directory with kubeadm patches (e.g. /etc/kubernetes/patches).') });
const imageMeta = obj({ imageRepository: str(), imageTag: str('Image tag; must match the OS Support Matrix row (KCP-3).') });
const kubeadmConfigSpec = obj({
  files: arr(
    obj(
      {
        path: str(),
        owner: str(),
        permissions: str(),
        encoding: str(undefined, { enum: ['base64', 'gzip', 'gzip+base64'] }),
        append: bool(),
        content: str(),
        contentFrom: preserved(),
      },
      ['path'],
    ),
  ),
  preKubeadmCommands: arr(str()),
  postKubeadmCommands: arr(str()),
  joinConfiguration: obj({
    apiVersion: str(),
    kind: str(),
    patches,
    nodeRegistration,
    controlPlane: preserved(),
    discovery: preserved(),
    caCertPath: str(),
    skipPhases: arr(str()),
  }),
  initConfiguration: obj({
    apiVersion: str(),
    kind: str(),
    patches,
    nodeRegistration,
    localAPIEndpoint: obj({ advertiseAddress: str(), bindPort: int() }),
    bootstrapTokens: arr(preserved()),
    skipPhases: arr(str()),
  }),
  clusterConfiguration: obj({
    apiVersion: str(),
    kind: str(),
    dns: imageMeta,
    etcd: obj({ local: obj({ imageRepository: str(), imageTag: str(), dataDir: str(), extraArgs: strMap() }), external: preserved() }),
    imageRepository: str(),
    kubernetesVersion: str(),
    clusterName: str(),
    controlPlaneEndpoint: str(),
    networking: obj({ serviceSubnet: str(), podSubnet: str(), dnsDomain: str() }),
    apiServer: preserved(),
    controllerManager: preserved(),
    scheduler: preserved(),
    featureGates: { type: 'object', additionalProperties: { type: 'boolean' } },
  }),
  users: arr(preserved()),
  ntp: preserved(),
  format: str(undefined, { enum: ['cloud-config', 'ignition'] }),
  verbosity: int(),
  useExperimentalRetryJoin: bool(),
  mounts: arr(arr(str())),
  diskSetup: preserved(),
});

const kubeadmConfig = crd(BOOTSTRAP, 'KubeadmConfig', 'kubeadmconfigs', {
  categories: ['cluster-api'],
  schema: root(
    kubeadmConfigSpec,
    obj({ ready: bool(), dataSecretName: str(), failureReason: str(), failureMessage: str(), observedGeneration: { type: 'integer', format: 'int64' }, conditions }),
  ),
  columns: [
    { name: 'Cluster', type: 'string', jsonPath: ".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']", description: 'Cluster' },
    { name: 'Ready', type: 'boolean', jsonPath: '.status.ready', description: 'Bootstrap configuration is ready' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time duration since creation of KubeadmConfig' },
  ],
});

const kubeadmConfigTemplate = crd(BOOTSTRAP, 'KubeadmConfigTemplate', 'kubeadmconfigtemplates', {
  categories: ['cluster-api'],
  status: false,
  schema: root(obj({ template: obj({ metadata: objectMetaTemplate, spec: kubeadmConfigSpec }) }, ['template'])),
  columns: [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time duration since creation of KubeadmConfigTemplate' }],
});

const kubeadmControlPlane = crd(CONTROLPLANE, 'KubeadmControlPlane', 'kubeadmcontrolplanes', {
  scale: REPLICAS_SCALE,
  shortNames: ['kcp'],
  categories: ['cluster-api'],
  schema: root(
    obj(
      {
        replicas: int(),
        version: str('Kubernetes version; upgrade together with dns/etcd image tags and the template (KCP-3).'),
        machineTemplate: obj(
          {
            metadata: objectMetaTemplate,
            infrastructureRef: objectReference(),
            nodeDrainTimeout: str(),
            nodeVolumeDetachTimeout: str(),
            nodeDeletionTimeout: str(),
          },
          ['infrastructureRef'],
        ),
        kubeadmConfigSpec,
        rolloutAfter: dateTime(),
        rolloutBefore: preserved(),
        remediationStrategy: preserved(),
        rolloutStrategy: obj({
          type: str(undefined, { enum: ['RollingUpdate'] }),
          rollingUpdate: obj({ maxSurge: intOrString('Keep 0 with pool-managed persistent disks (KCP-1).') }),
        }),
      },
      ['kubeadmConfigSpec', 'machineTemplate', 'version'],
    ),
    obj({
      selector: str(),
      replicas: int(),
      version: str(),
      updatedReplicas: int(),
      readyReplicas: int(),
      unavailableReplicas: int(),
      initialized: bool(),
      ready: bool(),
      failureReason: str(),
      failureMessage: str(),
      observedGeneration: { type: 'integer', format: 'int64' },
      conditions,
    }),
  ),
  columns: [
    { name: 'Cluster', type: 'string', jsonPath: ".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']", description: 'Cluster' },
    { name: 'Initialized', type: 'boolean', jsonPath: '.status.initialized', description: 'This denotes whether or not the control plane has the uploaded kubeadm-config configmap' },
    { name: 'API Server Available', type: 'boolean', jsonPath: '.status.ready', description: 'KubeadmControlPlane API Server is ready to receive requests' },
    { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas', description: 'Total number of machines desired by this control plane' },
    { name: 'Replicas', type: 'integer', jsonPath: '.status.replicas', description: 'Total number of non-terminated machines targeted by this control plane' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Total number of fully running and ready control plane machines' },
    { name: 'Updated', type: 'integer', jsonPath: '.status.updatedReplicas', description: 'Total number of non-terminated machines targeted by this control plane that have the desired template spec' },
    { name: 'Unavailable', type: 'integer', jsonPath: '.status.unavailableReplicas', description: 'Total number of unavailable machines targeted by this control plane' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time duration since creation of KubeadmControlPlane' },
    { name: 'Version', type: 'string', jsonPath: '.spec.version', description: 'Kubernetes version associated with this control plane' },
  ],
});

// ---- AppRelease (app.alauda.io, in the workload cluster) ---------------------

const appRelease = crd(APP, 'AppRelease', 'appreleases', {
  categories: ['alauda'],
  schema: root(
    obj({
      source: obj({
        charts: arr(
          obj({
            name: str('Chart name, e.g. acp/chart-cpaas-kube-ovn (managed by the provider).'),
            releaseName: str('Helm release name, e.g. cpaas-kube-ovn (managed by the provider).'),
            targetRevision: str('Chart version to install; patch it to upgrade Kube-OVN (OVN-4).'),
            namespace: str(),
            repoURL: str(),
          }),
        ),
      }),
      destination: preserved(),
      values: preserved('Helm values the provider reconciles (cluster name, CIDR, registry, control plane nodes; OVN-2).'),
      timeout: str(),
    }),
    obj({
      phase: str(),
      charts: {
        type: 'object',
        description: 'Per chart (keyed by chart name): installedRevision and phase (Upgrading, HealthChecking, Success, ...).',
        additionalProperties: { ...obj({ installedRevision: str(), targetRevision: str(), phase: str(), message: str(), lastTransitionTime: dateTime() }), 'x-kubernetes-preserve-unknown-fields': true },
      },
      conditions: arr(
        {
          ...obj({ type: str(), status: str(), reason: str(), message: str(), lastTransitionTime: dateTime() }, ['type', 'status']),
          'x-kubernetes-preserve-unknown-fields': true,
        },
        'Validate, Sync and Health conditions (OVN-4/5).',
      ),
      observedGeneration: { type: 'integer', format: 'int64' },
      valuesHash: str('Fingerprint of the values last synced.'),
    }),
  ),
  columns: [
    { name: 'Sync', type: 'string', jsonPath: '.status.conditions[?(@.type=="Sync")].reason' },
    { name: 'Health', type: 'string', jsonPath: '.status.conditions[?(@.type=="Health")].reason' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});

function crd(
  group: string,
  kind: string,
  plural: string,
  o: { schema: JSONSchemaProps; columns: PrinterColumn[]; shortNames?: string[]; categories?: string[]; status?: boolean; version?: string; scale?: ScaleSubresource },
): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}`, labels: { 'hcs-testbed.io/generated': 'true' } },
    spec: {
      group,
      names: {
        kind,
        listKind: `${kind}List`,
        plural,
        singular: kind.toLowerCase(),
        ...(o.shortNames ? { shortNames: o.shortNames } : {}),
        ...(o.categories ? { categories: o.categories } : {}),
      },
      scope: 'Namespaced',
      versions: [
        {
          name: o.version ?? (group === APP ? 'v1' : 'v1beta1'),
          served: true,
          storage: true,
          schema: { openAPIV3Schema: o.schema },
          ...(o.status === false ? {} : { subresources: { status: {}, ...(o.scale ? { scale: o.scale } : {}) } }),
          additionalPrinterColumns: o.columns,
        },
      ],
    },
  };
}

/** Every CRD of the testbed, in a stable order. */
export const CRDS: readonly CustomResourceDefinition[] = [
  cluster,
  machine,
  machineSet,
  machineDeployment,
  kubeadmConfig,
  kubeadmConfigTemplate,
  kubeadmControlPlane,
  hcsCluster,
  hcsMachine,
  hcsMachineTemplate,
  hcsMachineConfigPool,
  appRelease,
];

const byKind = new Map(CRDS.map((c) => [c.spec.names.kind, c]));

export function crdForKind(kind: string): CustomResourceDefinition | undefined {
  return byKind.get(kind);
}

/** The served version's schema of a kind, if it is a CRD. */
export function schemaForKind(kind: string): JSONSchemaProps | undefined {
  return byKind.get(kind)?.spec.versions[0]?.schema.openAPIV3Schema;
}
