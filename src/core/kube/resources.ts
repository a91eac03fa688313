/**
 * The resources the testbed knows: kind -> API group/version/plural. Both
 * backends (embedded store, real apiserver via client-node) use this table to
 * turn a kind into a REST path.
 */
export interface ResourceInfo {
  kind: string;
  group: string; // '' for core
  version: string;
  plural: string;
  namespaced: boolean;
  /** Has a status subresource: `update` ignores status, `updateStatus` ignores everything else. */
  statusSubresource: boolean;
  shortNames?: string[];
}

const INFRA = 'infrastructure.cluster.x-k8s.io';
const CAPI = 'cluster.x-k8s.io';
const BOOTSTRAP = 'bootstrap.cluster.x-k8s.io';
const CONTROLPLANE = 'controlplane.cluster.x-k8s.io';
const APPRELEASE = 'app.alauda.io';
export const RBAC = 'rbac.authorization.k8s.io';
export const STORAGE = 'storage.k8s.io';
/** Kubernetes' own API groups (not the testbed's or Cluster API's): strategic merge patch applies; a real cluster has its own objects there. */
export const BUILTIN_GROUPS: ReadonlySet<string> = new Set(['', 'apps', RBAC, STORAGE]);

function r(
  kind: string,
  group: string,
  version: string,
  plural: string,
  namespaced = true,
  statusSubresource = true,
  shortNames?: string[],
): ResourceInfo {
  return { kind, group, version, plural, namespaced, statusSubresource, ...(shortNames ? { shortNames } : {}) };
}

export const RESOURCES: readonly ResourceInfo[] = [
  r('Namespace', '', 'v1', 'namespaces', false, true, ['ns']),
  r('Secret', '', 'v1', 'secrets', true, false),
  r('ConfigMap', '', 'v1', 'configmaps', true, false, ['cm']),
  r('Node', '', 'v1', 'nodes', false, true, ['no']),
  r('Event', '', 'v1', 'events', true, false, ['ev']),
  // Controller deployments and their pods, so that `kubectl logs deployment/<name>` resolves a pod (OPS-3).
  r('Pod', '', 'v1', 'pods', true, true, ['po']),
  r('Deployment', 'apps', 'v1', 'deployments', true, true, ['deploy']),
  // Workload clusters' system workloads (kube-proxy, kube-ovn, coredns: src/world/workload/system-pods.ts).
  r('DaemonSet', 'apps', 'v1', 'daemonsets', true, true, ['ds']),
  r('ReplicaSet', 'apps', 'v1', 'replicasets', true, true, ['rs']),
  // kubeadm's RBAC in workload clusters: Cluster API's KCP writes kubeadm:get-nodes (ClusterRole + binding) and
  // kube-system/kubeadm:kubelet-config (Role + binding) before a rollout (controlplane/kubeadm/internal
  // workload_cluster_rbac.go AllowBootstrapTokensToGetNodes, ReconcileKubeletRBACRole/Binding). Stored, never enforced.
  r('Role', RBAC, 'v1', 'roles', true, false),
  r('RoleBinding', RBAC, 'v1', 'rolebindings', true, false),
  r('ClusterRole', RBAC, 'v1', 'clusterroles', false, false),
  r('ClusterRoleBinding', RBAC, 'v1', 'clusterrolebindings', false, false),
  // Cluster API's Machine deletion waits until no VolumeAttachment names the Node (internal/controllers/machine
  // machine_controller.go shouldWaitForNodeVolumes, v1.10); the testbed's workload clusters have none.
  r('VolumeAttachment', STORAGE, 'v1', 'volumeattachments', false, true),
  r('Cluster', CAPI, 'v1beta1', 'clusters', true, true, ['cl']),
  r('Machine', CAPI, 'v1beta1', 'machines', true, true, ['ma']),
  r('MachineSet', CAPI, 'v1beta1', 'machinesets', true, true, ['ms']),
  r('MachineDeployment', CAPI, 'v1beta1', 'machinedeployments', true, true, ['md']),
  r('KubeadmConfig', BOOTSTRAP, 'v1beta1', 'kubeadmconfigs', true, true),
  r('KubeadmConfigTemplate', BOOTSTRAP, 'v1beta1', 'kubeadmconfigtemplates', true, false),
  r('KubeadmControlPlane', CONTROLPLANE, 'v1beta1', 'kubeadmcontrolplanes', true, true, ['kcp']),
  r('HCSCluster', INFRA, 'v1beta1', 'hcsclusters', true, true),
  r('HCSMachine', INFRA, 'v1beta1', 'hcsmachines', true, true),
  r('HCSMachineTemplate', INFRA, 'v1beta1', 'hcsmachinetemplates', true, false),
  r('HCSMachineConfigPool', INFRA, 'v1beta1', 'hcsmachineconfigpools', true, true),
  r('AppRelease', APPRELEASE, 'v1', 'appreleases', true, true),
];

const byKind = new Map(RESOURCES.map((x) => [x.kind, x]));
const byName = new Map<string, ResourceInfo>();
for (const x of RESOURCES) {
  byName.set(x.plural, x);
  byName.set(x.kind.toLowerCase(), x);
  for (const s of x.shortNames ?? []) byName.set(s, x);
  if (x.group) byName.set(`${x.plural}.${x.group}`, x);
}

export function resourceForKind(kind: string): ResourceInfo {
  const info = byKind.get(kind);
  if (!info) throw new Error(`unknown kind "${kind}" (known: ${[...byKind.keys()].join(', ')})`);
  return info;
}

/** Resolve what a kubectl user types ("machines", "md", "hcsmachineconfigpool") to a resource. */
export function resourceForName(name: string): ResourceInfo | undefined {
  const n = name.toLowerCase();
  return byName.get(n) ?? byName.get(n.replace(/s$/, '')) ?? byName.get(n.split('.')[0] ?? n);
}

export function apiVersionOf(info: ResourceInfo): string {
  return info.group ? `${info.group}/${info.version}` : info.version;
}
