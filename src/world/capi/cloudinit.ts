/**
 * cloud-init rendering for a kubeadm join, as CAPBK does in
 * bootstrap/kubeadm/internal/cloudinit/{cloudinit.go,node.go}: write_files
 * (the KubeadmConfig's files, then /run/kubeadm/kubeadm-join-config.yaml and
 * the /run/cluster-api placeholder), runcmd (preKubeadmCommands,
 * `kubeadm join --config ...` followed by the bootstrap-success sentinel,
 * postKubeadmCommands), users.
 *
 * Differences from upstream (docs/capi.md): the header is plain
 * `#cloud-config` (upstream prefixes `## template: jinja` for its
 * instance-metadata templating); the cluster CA certificate is also written to
 * /etc/kubernetes/pki/ca.crt so the simulated guest can check the kubelet
 * certificate chain (BOOT-3) without running TLS discovery.
 */
import { dumpYaml } from '../../core/yaml.js';
import type { BootstrapFile, KubeadmConfigSpec } from '../../product/api/capi.js';

export const JOIN_CONFIG_PATH = '/run/kubeadm/kubeadm-join-config.yaml';
/** CAPBK's init configuration file (ClusterConfiguration + InitConfiguration). */
export const INIT_CONFIG_PATH = '/run/kubeadm/kubeadm.yaml';
export const CA_KEY_PATH = '/etc/kubernetes/pki/ca.key';
export const KUBEADM_INIT_COMMAND = `kubeadm init --config ${INIT_CONFIG_PATH}`;
export const CA_CERT_PATH = '/etc/kubernetes/pki/ca.crt';
export const KUBEADM_JOIN_COMMAND = `kubeadm join --config ${JOIN_CONFIG_PATH}`;
export const SENTINEL_COMMAND = 'echo success > /run/cluster-api/bootstrap-success.complete';
/** kubeadm config API used for the JoinConfiguration (CAPBK uses v1beta3 for Kubernetes 1.22 – 1.30). */
export const KUBEADM_API_VERSION = 'kubeadm.k8s.io/v1beta3';

export interface JoinInput {
  spec: KubeadmConfigSpec;
  apiServerEndpoint: string;
  token: string;
  caCertHashes: string[];
  caCertPem: string;
  /** Control-plane join: the CA key is written too (kubeadm join --control-plane needs the shared certificates). */
  caKeyPem?: string;
}

export interface InitInput {
  spec: KubeadmConfigSpec;
  /** host:port of the control plane endpoint. */
  controlPlaneEndpoint: string;
  clusterName: string;
  kubernetesVersion: string;
  token: string;
  caCertPem: string;
  caKeyPem: string;
  podSubnet?: string;
  serviceSubnet?: string;
}

/** The kubeadm JoinConfiguration document (YAML). */
export function renderJoinConfiguration(input: JoinInput): string {
  const jc = input.spec.joinConfiguration ?? {};
  const doc: Record<string, unknown> = {
    apiVersion: KUBEADM_API_VERSION,
    kind: 'JoinConfiguration',
    discovery: {
      bootstrapToken: {
        apiServerEndpoint: input.apiServerEndpoint,
        caCertHashes: input.caCertHashes,
        token: input.token,
      },
    },
    nodeRegistration: structuredClone(jc.nodeRegistration ?? {}),
    ...(jc.controlPlane ? { controlPlane: structuredClone(jc.controlPlane) } : {}),
    ...(jc.patches ? { patches: structuredClone(jc.patches) } : {}),
  };
  return dumpYaml(doc);
}

function fileEntry(f: BootstrapFile): Record<string, unknown> {
  return {
    path: f.path,
    ...(f.encoding ? { encoding: f.encoding } : {}),
    ...(f.owner ? { owner: f.owner } : {}),
    ...(f.permissions ? { permissions: f.permissions } : {}),
    ...(f.append ? { append: true } : {}),
    content: f.content ?? '',
  };
}

/** The full `#cloud-config` user data for a node joining the cluster. */
export function renderJoinCloudInit(input: JoinInput): string {
  const spec = input.spec;
  const doc: Record<string, unknown> = {
    write_files: [
      ...(spec.files ?? []).map(fileEntry),
      { path: CA_CERT_PATH, owner: 'root:root', permissions: '0644', content: input.caCertPem },
      ...(input.caKeyPem ? [{ path: CA_KEY_PATH, owner: 'root:root', permissions: '0600', content: input.caKeyPem }] : []),
      { path: JOIN_CONFIG_PATH, owner: 'root:root', permissions: '0640', content: `---\n${renderJoinConfiguration(input)}` },
      {
        path: '/run/cluster-api/placeholder',
        owner: 'root:root',
        permissions: '0640',
        content: 'Creates the /run/cluster-api directory (as CAPBK does with a file in it, portable across guest OSes).',
      },
    ],
    runcmd: [...(spec.preKubeadmCommands ?? []), `${KUBEADM_JOIN_COMMAND} && ${SENTINEL_COMMAND}`, ...(spec.postKubeadmCommands ?? [])],
    ...(spec.users?.length ? { users: spec.users.map((u) => ({ name: u.name, ...(u.sshAuthorizedKeys ? { ssh_authorized_keys: u.sshAuthorizedKeys } : {}) })) } : {}),
  };
  return `#cloud-config\n${dumpYaml(doc)}`;
}

/** The kubeadm ClusterConfiguration + InitConfiguration documents (YAML) of the first control plane node. */
export function renderInitConfiguration(input: InitInput): string {
  const cc = input.spec.clusterConfiguration ?? {};
  const ic = input.spec.initConfiguration ?? {};
  const cluster: Record<string, unknown> = {
    apiVersion: KUBEADM_API_VERSION,
    kind: 'ClusterConfiguration',
    clusterName: input.clusterName,
    controlPlaneEndpoint: input.controlPlaneEndpoint,
    kubernetesVersion: input.kubernetesVersion,
    ...(cc.imageRepository ? { imageRepository: cc.imageRepository } : {}),
    ...(cc.dns ? { dns: structuredClone(cc.dns) } : {}),
    ...(cc.etcd ? { etcd: structuredClone(cc.etcd) } : {}),
    networking: { ...(input.podSubnet ? { podSubnet: input.podSubnet } : {}), ...(input.serviceSubnet ? { serviceSubnet: input.serviceSubnet } : {}) },
  };
  const init: Record<string, unknown> = {
    apiVersion: KUBEADM_API_VERSION,
    kind: 'InitConfiguration',
    bootstrapTokens: [{ token: input.token, ttl: '15m0s', usages: ['signing', 'authentication'], groups: ['system:bootstrappers:kubeadm:default-node-token'] }],
    nodeRegistration: structuredClone(ic.nodeRegistration ?? {}),
    ...(ic.patches ? { patches: structuredClone(ic.patches) } : {}),
  };
  return `---\n${dumpYaml(cluster)}---\n${dumpYaml(init)}`;
}

/** The `#cloud-config` user data of the first control plane node (`kubeadm init`). */
export function renderInitCloudInit(input: InitInput): string {
  const spec = input.spec;
  const doc: Record<string, unknown> = {
    write_files: [
      ...(spec.files ?? []).map(fileEntry),
      { path: CA_CERT_PATH, owner: 'root:root', permissions: '0644', content: input.caCertPem },
      { path: CA_KEY_PATH, owner: 'root:root', permissions: '0600', content: input.caKeyPem },
      { path: INIT_CONFIG_PATH, owner: 'root:root', permissions: '0640', content: renderInitConfiguration(input) },
      {
        path: '/run/cluster-api/placeholder',
        owner: 'root:root',
        permissions: '0640',
        content: 'Creates the /run/cluster-api directory (as CAPBK does with a file in it, portable across guest OSes).',
      },
    ],
    runcmd: [...(spec.preKubeadmCommands ?? []), `${KUBEADM_INIT_COMMAND} && ${SENTINEL_COMMAND}`, ...(spec.postKubeadmCommands ?? [])],
    ...(spec.users?.length ? { users: spec.users.map((u) => ({ name: u.name, ...(u.sshAuthorizedKeys ? { ssh_authorized_keys: u.sshAuthorizedKeys } : {}) })) } : {}),
  };
  return `#cloud-config\n${dumpYaml(doc)}`;
}
