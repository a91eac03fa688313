import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { injectCloudInit, patchJoinConfiguration } from '../../src/product/provider/index.js';

const USER_FILE = '{\n  "tlsCertFile": "/etc/kubernetes/pki/kubelet.crt",\n  "tlsPrivateKeyFile": "/etc/kubernetes/pki/kubelet.key"\n}\n';
const ORIGINAL = `#cloud-config
write_files:
  - path: /etc/kubernetes/patches/kubeletconfiguration0+strategic.json
    owner: root:root
    permissions: "0644"
    content: ${JSON.stringify(USER_FILE)}
  - path: /run/kubeadm/kubeadm-join-config.yaml
    permissions: "0640"
    content: |
      ---
      apiVersion: kubeadm.k8s.io/v1beta3
      kind: JoinConfiguration
      nodeRegistration:
        kubeletExtraArgs:
          volume-plugin-dir: /opt/libexec/kubernetes/kubelet-plugins/volume/exec/
      patches:
        directory: /etc/kubernetes/patches
runcmd:
  - kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml
  - chmod 600 /var/lib/kubelet/config.yaml
`;

interface Doc {
  hostname: string;
  fqdn: string;
  write_files: { path: string; content: string; permissions?: string }[];
  fs_setup: { device: string; filesystem: string; label: string; overwrite: boolean }[];
  mounts: string[][];
  runcmd: string[];
}

describe('cloud-init injection', () => {
  const out = injectCloudInit(ORIGINAL, {
    hostname: 'worker-1',
    providerID: 'hcs://demo/md-0-aaaaa',
    kubeletCertPem: 'CERT',
    kubeletKeyPem: 'KEY',
    dataVolumes: [{ size: 20, type: 'SSD', mountPath: '/var/lib/kubelet', format: 'xfs' }],
    persistentDisks: [{ slot: 0, volumeId: '0123456789abcdefghij-rest', mountPath: '/var/cpaas', format: 'xfs', mountOptions: ['noatime'] }],
  });
  const doc = parseYaml(out) as Doc;

  it('BOOT-2: adds kubelet.crt/kubelet.key, hostname, node name and provider-id; user files stay byte for byte', () => {
    expect(out.startsWith('#cloud-config\n')).toBe(true);
    expect(doc.hostname).toBe('worker-1');
    expect(doc.fqdn).toBe('worker-1');
    const files = Object.fromEntries(doc.write_files.map((f) => [f.path, f]));
    expect(files['/etc/kubernetes/patches/kubeletconfiguration0+strategic.json']!.content).toBe(USER_FILE);
    expect(files['/etc/kubernetes/pki/kubelet.crt']!.content).toBe('CERT');
    expect(files['/etc/kubernetes/pki/kubelet.key']).toMatchObject({ content: 'KEY', permissions: '0600' });
    const join = parseYaml(files['/run/kubeadm/kubeadm-join-config.yaml']!.content) as { nodeRegistration: { name: string; kubeletExtraArgs: Record<string, string> }; patches: unknown };
    expect(join.nodeRegistration.name).toBe('worker-1');
    expect(join.nodeRegistration.kubeletExtraArgs['provider-id']).toBe('hcs://demo/md-0-aaaaa');
    expect(join.nodeRegistration.kubeletExtraArgs['volume-plugin-dir']).toBe('/opt/libexec/kubernetes/kubelet-plugins/volume/exec/');
    expect(join.patches).toEqual({ directory: '/etc/kubernetes/patches' });
    expect(doc.runcmd).toEqual(['kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml', 'chmod 600 /var/lib/kubelet/config.yaml']);
  });

  it('DISK-8, TPL-3: data volumes by device order, persistent disks by volume id with label pd<slot>, never overwritten', () => {
    expect(doc.fs_setup).toEqual([
      { label: 'dv0', filesystem: 'xfs', device: '/dev/vdb', overwrite: false },
      { label: 'pd0', filesystem: 'xfs', device: '/dev/disk/by-id/virtio-0123456789abcdefghij', overwrite: false },
    ]);
    expect(doc.mounts).toEqual([
      ['/dev/vdb', '/var/lib/kubelet', 'xfs', 'defaults,nofail', '0', '2'],
      ['/dev/disk/by-id/virtio-0123456789abcdefghij', '/var/cpaas', 'xfs', 'noatime,nofail', '0', '2'],
    ]);
  });

  it('BOOT-2: provider-id is set in the list form of kubeletExtraArgs (kubeadm v1beta4) too', () => {
    const v4 = 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: JoinConfiguration\nnodeRegistration:\n  kubeletExtraArgs:\n    - name: provider-id\n      value: old\n    - name: v\n      value: "2"\n';
    const j = parseYaml(patchJoinConfiguration(v4, 'n1', 'hcs://c/m')) as { nodeRegistration: { name: string; kubeletExtraArgs: { name: string; value: string }[] } };
    expect(j.nodeRegistration.name).toBe('n1');
    expect(j.nodeRegistration.kubeletExtraArgs).toEqual([
      { name: 'provider-id', value: 'hcs://c/m' },
      { name: 'v', value: '2' },
    ]);
  });

  it('BOOT-2: bootstrap data without a join configuration is refused with a reason', () => {
    expect(() => injectCloudInit('#cloud-config\nruncmd: []\n', { hostname: 'h', providerID: 'p', kubeletCertPem: '', kubeletKeyPem: '', dataVolumes: [], persistentDisks: [] })).toThrow(/kubeadm-join-config/);
    expect(() => injectCloudInit('{"ignition":{}}', { hostname: 'h', providerID: 'p', kubeletCertPem: '', kubeletKeyPem: '', dataVolumes: [], persistentDisks: [] })).toThrow(/#cloud-config/);
  });
});
