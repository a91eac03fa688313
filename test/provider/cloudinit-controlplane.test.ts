import { describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { renderInitCloudInit, renderJoinCloudInit } from '../../src/world/capi/cloudinit.js';
import { kubeadmCommand, parseGuestCloudConfig, parseKubeadmConfig } from '../../src/world/guest/cloudinit.js';
import { INIT_CONFIG_PATH, JOIN_CONFIG_PATH, KUBELET_CERT_PATH, KUBELET_KEY_PATH, injectCloudInit } from '../../src/product/provider/index.js';
import type { KubeadmConfigSpec } from '../../src/product/api/capi.js';

const PATCH = '/etc/kubernetes/patches/kubeletconfiguration0+strategic.json';
const SPEC: KubeadmConfigSpec = {
  files: [{ path: PATCH, owner: 'root:root', permissions: '0644', content: '{"tlsCertFile": "/etc/kubernetes/pki/kubelet.crt", "tlsPrivateKeyFile": "/etc/kubernetes/pki/kubelet.key"}\n' }],
  clusterConfiguration: { dns: { imageTag: 'v1.11.3' }, etcd: { local: { imageTag: '3.5.15-0', dataDir: '/var/lib/etcd' } } },
  initConfiguration: { patches: { directory: '/etc/kubernetes/patches' }, nodeRegistration: { kubeletExtraArgs: { 'volume-plugin-dir': '/opt/libexec/x/' } } },
  joinConfiguration: { patches: { directory: '/etc/kubernetes/patches' }, nodeRegistration: { kubeletExtraArgs: { 'volume-plugin-dir': '/opt/libexec/x/' } }, controlPlane: {} },
  postKubeadmCommands: ['chmod 600 /var/lib/kubelet/config.yaml'],
};
const INJ = {
  hostname: 'demo-cp-1',
  providerID: 'hcs://demo/demo-control-plane-abcde',
  kubeletCertPem: 'CERT',
  kubeletKeyPem: 'KEY',
  dataVolumes: [],
  persistentDisks: [{ slot: 0, volumeId: '0123456789abcdefghij-rest', mountPath: '/var/cpaas', format: 'xfs' }],
};

interface Doc {
  hostname: string;
  fqdn: string;
  write_files: { path: string; content: string }[];
  mounts: string[][];
  runcmd: string[];
}

describe('cloud-init injection for control plane machines (BOOT-2)', () => {
  it('kubeadm init: the InitConfiguration gets the hostname and provider-id; ClusterConfiguration and user files untouched', () => {
    const original = renderInitCloudInit({ spec: SPEC, controlPlaneEndpoint: '192.168.1.10:6443', clusterName: 'demo', kubernetesVersion: 'v1.31.6', token: 'abcdef.0123456789abcdef', caCertPem: 'CA', caKeyPem: 'CAKEY' });
    const out = injectCloudInit(original, INJ);
    const doc = parseYaml(out) as Doc;
    expect(doc.hostname).toBe('demo-cp-1');
    expect(doc.fqdn).toBe('demo-cp-1');
    const files = doc.write_files.map((f) => f.path);
    expect(files).toContain(KUBELET_CERT_PATH);
    expect(files).toContain(KUBELET_KEY_PATH);
    expect(files).not.toContain(JOIN_CONFIG_PATH);
    const before = (parseYaml(original) as Doc).write_files.find((f) => f.path === PATCH)!.content;
    expect(doc.write_files.find((f) => f.path === PATCH)!.content).toBe(before);
    const init = doc.write_files.find((f) => f.path === INIT_CONFIG_PATH)!.content;
    const docs = parseAllDocuments(init).map((d) => d.toJS() as Record<string, unknown>);
    const cc = docs.find((d) => d.kind === 'ClusterConfiguration')!;
    expect(cc.kubernetesVersion).toBe('v1.31.6');
    expect(cc.dns).toEqual({ imageTag: 'v1.11.3' });
    const ic = docs.find((d) => d.kind === 'InitConfiguration') as { nodeRegistration: { name: string; kubeletExtraArgs: Record<string, string> } };
    expect(ic.nodeRegistration.name).toBe('demo-cp-1');
    expect(ic.nodeRegistration.kubeletExtraArgs).toEqual({ 'volume-plugin-dir': '/opt/libexec/x/', 'provider-id': INJ.providerID });
    expect(doc.mounts.some((m) => m[1] === '/var/cpaas')).toBe(true);
    // What the guest reads from it: kubeadm init with the node name, provider-id and patches directory.
    const g = parseGuestCloudConfig(out);
    const cmd = kubeadmCommand(g.runcmd)!;
    expect(cmd).toEqual({ verb: 'init', configPath: INIT_CONFIG_PATH });
    const kc = parseKubeadmConfig(g.files.find((f) => f.path === cmd.configPath)!.content)!;
    expect(kc).toMatchObject({ kind: 'InitConfiguration', nodeName: 'demo-cp-1', patchesDirectory: '/etc/kubernetes/patches' });
    expect(kc.kubeletExtraArgs['provider-id']).toBe(INJ.providerID);
  });

  it('control plane join: the JoinConfiguration keeps controlPlane and gets the hostname and provider-id', () => {
    const original = renderJoinCloudInit({ spec: SPEC, apiServerEndpoint: '192.168.1.10:6443', token: 'abcdef.0123456789abcdef', caCertHashes: ['sha256:00'], caCertPem: 'CA', caKeyPem: 'CAKEY' });
    const out = injectCloudInit(original, { ...INJ, hostname: 'demo-cp-2' });
    const doc = parseYaml(out) as Doc;
    const jc = parseYaml(doc.write_files.find((f) => f.path === JOIN_CONFIG_PATH)!.content) as { controlPlane?: unknown; nodeRegistration: { name: string; kubeletExtraArgs: Record<string, string> } };
    expect(jc.controlPlane).toEqual({});
    expect(jc.nodeRegistration.name).toBe('demo-cp-2');
    expect(jc.nodeRegistration.kubeletExtraArgs['provider-id']).toBe(INJ.providerID);
    expect(doc.hostname).toBe('demo-cp-2');
    expect(doc.write_files.map((f) => f.path)).toEqual(expect.arrayContaining([KUBELET_CERT_PATH, KUBELET_KEY_PATH, '/etc/kubernetes/pki/ca.key']));
  });

  it('bootstrap data with both an init and a join file, or an init file without InitConfiguration, is refused with a reason', () => {
    const both = `#cloud-config\nwrite_files:\n  - path: ${INIT_CONFIG_PATH}\n    content: "kind: InitConfiguration\\n"\n  - path: ${JOIN_CONFIG_PATH}\n    content: "kind: JoinConfiguration\\n"\n`;
    expect(() => injectCloudInit(both, INJ)).toThrow(/both/);
    const noInit = `#cloud-config\nwrite_files:\n  - path: ${INIT_CONFIG_PATH}\n    content: "kind: ClusterConfiguration\\n"\n`;
    expect(() => injectCloudInit(noInit, INJ)).toThrow(/no InitConfiguration document/);
  });
});
