/**
 * The workload cluster's `kube-system/kubeadm-config` ConfigMap, as
 * `kubeadm init` uploads it (cmd/kubeadm/app/phases/uploadconfig: data key
 * `ClusterConfiguration`, the ClusterConfiguration YAML with the defaults
 * kubeadm fills in) and as the KubeadmControlPlane controller updates it at
 * the start of an upgrade (controlplane/kubeadm/internal/workload_cluster.go
 * UpdateClusterConfiguration: kubernetesVersion, imageRepository, etcd, dns).
 * kubeadm v1.31+ writes kubeadm.k8s.io/v1beta4, older v1beta3.
 */
import { parse, stringify } from 'yaml';
import type { Cluster, KubeadmControlPlane } from '../../product/api/capi.js';
import { memoByString } from '../../core/memo.js';
import type { KubeClient } from '../../core/kube/client.js';
import type { KubeObject } from '../../core/kube/types.js';

export const KUBEADM_CONFIGMAP = { namespace: 'kube-system', name: 'kubeadm-config' } as const;

type ConfigMap = KubeObject & { data?: Record<string, string> };

// Every KCP reconcile re-reads and re-renders the same document: both YAML steps are cached by their text
// (src/core/memo.ts). A parsed value is shared between callers: it is only read, never changed.
const stringifyCached = memoByString((json: string) => stringify(JSON.parse(json) as unknown));
const parseCached = memoByString((text: string): unknown => {
  try {
    return parse(text) as unknown;
  } catch {
    return undefined;
  }
});

function minor(v: string): number {
  return Number(/^v?\d+\.(\d+)/.exec(v)?.[1] ?? 0);
}

/** The ClusterConfiguration document for a cluster at `kubernetesVersion`. */
export function renderClusterConfiguration(cluster: Cluster, kcp: KubeadmControlPlane, kubernetesVersion: string, dnsImageTag: string, etcd: Record<string, unknown>): string {
  const cc = kcp.spec.kubeadmConfigSpec.clusterConfiguration ?? {};
  const ep = cluster.spec.controlPlaneEndpoint;
  const v1beta4 = minor(kubernetesVersion) >= 31;
  const net = cluster.spec.clusterNetwork;
  return stringifyCached(JSON.stringify({
    apiServer: {},
    apiVersion: v1beta4 ? 'kubeadm.k8s.io/v1beta4' : 'kubeadm.k8s.io/v1beta3',
    ...(v1beta4 ? { caCertificateValidityPeriod: '87600h0m0s', certificateValidityPeriod: '8760h0m0s' } : {}),
    certificatesDir: '/etc/kubernetes/pki',
    clusterName: cluster.metadata.name,
    ...(ep?.host ? { controlPlaneEndpoint: `${ep.host}:${ep.port}` } : {}),
    controllerManager: {},
    dns: { ...(cc.dns ?? {}), ...(dnsImageTag ? { imageTag: dnsImageTag } : {}) },
    ...(v1beta4 ? { encryptionAlgorithm: 'RSA-2048' } : {}),
    etcd,
    imageRepository: cc.imageRepository ?? 'registry.k8s.io',
    kind: 'ClusterConfiguration',
    kubernetesVersion,
    networking: {
      dnsDomain: net?.serviceDomain ?? 'cluster.local',
      ...(net?.pods?.cidrBlocks?.length ? { podSubnet: net.pods.cidrBlocks.join(',') } : {}),
      serviceSubnet: net?.services?.cidrBlocks?.join(',') ?? '10.96.0.0/12',
    },
    proxy: {},
    scheduler: {},
  }));
}

/** Create or update kubeadm-config once the control plane is initialized (kubernetesVersion known). */
export async function writeKubeadmConfig(wl: KubeClient, cluster: Cluster, kcp: KubeadmControlPlane, kubernetesVersion: string, dnsImageTag: string): Promise<void> {
  if (!kubernetesVersion) return;
  const cur = await wl.get<ConfigMap>({ kind: 'ConfigMap', ...KUBEADM_CONFIGMAP });
  const prev = (parseCached(cur?.data?.ClusterConfiguration ?? '') ?? {}) as { kubernetesVersion?: string; etcd?: Record<string, unknown> };
  // etcd follows the KCP's spec when the version moves (the upgrade started), otherwise it stays as uploaded.
  const specEtcd = kcp.spec.kubeadmConfigSpec.clusterConfiguration?.etcd?.local ?? {};
  const etcd = prev.etcd && prev.kubernetesVersion === kubernetesVersion ? prev.etcd : { local: { dataDir: '/var/lib/etcd', ...specEtcd } };
  const data = { ClusterConfiguration: renderClusterConfiguration(cluster, kcp, kubernetesVersion, dnsImageTag, etcd) };
  if (!cur) {
    await wl.create<ConfigMap>({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...KUBEADM_CONFIGMAP }, data });
  } else if (cur.data?.ClusterConfiguration !== data.ClusterConfiguration) {
    await wl.update<ConfigMap>({ ...cur, data: { ...(cur.data ?? {}), ...data } });
  }
}
