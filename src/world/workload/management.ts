/**
 * The management cluster's own Node, as kind creates it (the documents'
 * bootstrap cluster is kind): `<cluster>-control-plane` with the kubelet's
 * labels, kubeadm's control-plane role label and
 * exclude-from-external-load-balancers label, no taint (kind removes the
 * control-plane taint from a single-node cluster), providerID
 * `kind://docker/<cluster>/<node>`, an InternalIP on kind's docker network.
 * The controller pods of the facade (src/world/facade/controllers.ts) run on it.
 */
import type { Node } from '../../product/api/core.js';
import { rfc3339, type Clock } from '../../core/clock.js';
import type { KubeClient } from '../../core/kube/client.js';
import { LABEL_ROLE_CONTROL_PLANE } from './pods.js';

export const MANAGEMENT_CLUSTER_NAME = 'management';
export const MANAGEMENT_NODE = `${MANAGEMENT_CLUSTER_NAME}-control-plane`;

export function managementNode(nowMs: number, kubeletVersion: string, cluster = MANAGEMENT_CLUSTER_NAME): Node {
  const name = `${cluster}-control-plane`;
  const t = rfc3339(nowMs);
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        [LABEL_ROLE_CONTROL_PLANE]: '',
        'node.kubernetes.io/exclude-from-external-load-balancers': '',
      },
      annotations: { 'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///run/containerd/containerd.sock', 'node.alpha.kubernetes.io/ttl': '0', 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
    },
    spec: { providerID: `kind://docker/${cluster}/${name}` },
    status: {
      conditions: [
        { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available', lastTransitionTime: t },
        { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure', lastTransitionTime: t },
        { type: 'PIDPressure', status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available', lastTransitionTime: t },
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastTransitionTime: t },
      ],
      addresses: [{ type: 'InternalIP', address: '172.18.0.2' }, { type: 'Hostname', address: name }],
      nodeInfo: { kubeletVersion, osImage: 'Debian GNU/Linux 12 (bookworm)', kernelVersion: '6.1.0-hcs-testbed', containerRuntimeVersion: 'containerd://2.1.1' },
    },
  } as Node;
}

/** Create the management Node once (an embedded management cluster has none). */
export async function ensureManagementNode(store: KubeClient, clock: Clock, kubeletVersion: string): Promise<void> {
  if (await store.get<Node>({ kind: 'Node', name: MANAGEMENT_NODE })) return;
  await store.create<Node>(managementNode(clock.now(), kubeletVersion));
}
