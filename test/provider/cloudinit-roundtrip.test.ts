/**
 * The cloud-init YAML paths (js-yaml, src/product/provider/cloudinit.ts): what the
 * provider injects is what the guest reads, plain scalars resolve as the
 * `yaml` package resolves them (YAML 1.2 core), and the emitted user data
 * reads the same under YAML 1.1 (PyYAML, what cloud-init uses), which the
 * `yaml` package's 1.1 schema stands in for here.
 */
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { BootstrapFile, KubeadmConfigSpec } from '../../src/product/api/capi.js';
import { renderInitCloudInit, renderJoinCloudInit } from '../../src/world/capi/cloudinit.js';
import { GuestCloudInitError, kubeadmCommand, parseGuestCloudConfig, parseKubeadmConfig } from '../../src/world/guest/cloudinit.js';
import { dumpYaml, loadYaml } from '../../src/core/yaml.js';
import { CloudInitError, INIT_CONFIG_PATH, JOIN_CONFIG_PATH, KUBELET_CERT_PATH, KUBELET_KEY_PATH, injectCloudInit, patchInitConfiguration, patchJoinConfiguration } from '../../src/product/provider/cloudinit.js';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIBQTCB6aADAgECAggU3SeR+m5e9DAKBggqhkjOPQQDAjAVMRMwEQYDVQQDEwpr\ndWJlcm5ldGVzMB4XDTI1MTIzMTAwMDAwMFoXDTM1MTIzMDAwMDAwMFowFTETMBEG\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIGsuuE3u10536lVOaMych15ZULl9pWA1hLK8MfS2qZf7oAoGCCqGSM49\n-----END EC PRIVATE KEY-----\n';
/** Strings a YAML 1.1 or 1.2 reader takes for something else when they are written plain. */
const AMBIGUOUS = ['0644', 'on', 'yes', 'No', 'off', 'y', '1e3', '1_000', '0b101', '0o14', '0x1F', '12:30', '2001-12-14', '2001-12-14 21:59:43.10 -5', '<<', '=', '~', 'null', 'true', '.inf', '.5', '+12', '1.0', ''];

const USER_FILES: BootstrapFile[] = [
  { path: '/etc/kubernetes/patches/kubeletconfiguration0+strategic.json', owner: 'root:root', permissions: '0644', content: '{\n  "tlsCertFile": "/etc/kubernetes/pki/kubelet.crt",\n  "tlsPrivateKeyFile": "/etc/kubernetes/pki/kubelet.key"\n}\n' },
  { path: '/etc/sysctl.d/90-on.conf', permissions: '0600', content: 'on' },
  { path: '/etc/motd', content: '  leading spaces\ntrailing spaces   \n\n\nkept\n\n' },
  { path: '/etc/b64', encoding: 'base64', content: Buffer.from('yes: no\n').toString('base64') },
  { path: '/etc/octal', permissions: '0755', content: '0644' },
];
const SPEC: KubeadmConfigSpec = {
  files: USER_FILES,
  joinConfiguration: { patches: { directory: '/etc/kubernetes/patches' }, nodeRegistration: { kubeletExtraArgs: { 'volume-plugin-dir': '/opt/libexec/x/', v: '2' } } },
  preKubeadmCommands: ['echo 1_000', 'sysctl -w net.ipv4.ip_forward=1'],
  postKubeadmCommands: ['chmod 600 /var/lib/kubelet/config.yaml', ...AMBIGUOUS],
  users: [{ name: 'core', sshAuthorizedKeys: ['ssh-ed25519 AAAA yes'] }],
};
const INJ = {
  hostname: 'worker-7',
  providerID: 'hcs://demo/md-0-x7k2p',
  kubeletCertPem: PEM,
  kubeletKeyPem: KEY,
  dataVolumes: [
    { size: 20, type: 'SSD', mountPath: '/var/lib/kubelet', format: 'xfs' },
    { size: 50, type: 'SSD', mountPath: '/var/lib/containerd', format: 'ext4' },
  ],
  persistentDisks: [
    { slot: 1, volumeId: 'ffffffff-0000-1111-2222-333333333333', mountPath: '/var/cpaas/b', format: 'xfs' },
    { slot: 0, volumeId: '0123456789abcdefghij-rest', mountPath: '/var/cpaas', format: 'xfs', mountOptions: ['noatime', 'nodiratime'] },
  ],
};
const noInj = { hostname: 'h', providerID: 'p', kubeletCertPem: '', kubeletKeyPem: '', dataVolumes: [], persistentDisks: [] };

function joinData(): string {
  return renderJoinCloudInit({ spec: SPEC, apiServerEndpoint: '192.168.1.10:6443', token: 'abcdef.0123456789abcdef', caCertHashes: ['sha256:00'], caCertPem: PEM });
}

describe('cloud-init round trip: provider injection -> guest (BOOT-2)', () => {
  const original = joinData();
  const out = injectCloudInit(original, INJ);
  const guest = parseGuestCloudConfig(out);

  it('keeps every write_files path, content and permissions, and adds the kubelet certificate and key', () => {
    const want: { path: string; content?: string; permissions?: string }[] = [
      ...USER_FILES.map((f) => ({ path: f.path, content: f.encoding ? Buffer.from(f.content ?? '', 'base64').toString('utf8') : f.content, permissions: f.permissions })),
      { path: '/etc/kubernetes/pki/ca.crt', content: PEM, permissions: '0644' },
      { path: JOIN_CONFIG_PATH, permissions: '0640' },
      { path: '/run/cluster-api/placeholder', permissions: '0640' },
      { path: KUBELET_CERT_PATH, content: PEM, permissions: '0644' },
      { path: KUBELET_KEY_PATH, content: KEY, permissions: '0600' },
    ];
    expect(guest.files.map((f) => f.path)).toEqual(want.map((f) => f.path));
    for (const [i, w] of want.entries()) {
      const got = guest.files[i]!;
      if (w.content !== undefined) expect(got.content, w.path).toBe(w.content);
      expect(got.permissions, w.path).toBe(w.permissions);
      expect(typeof got.content).toBe('string');
    }
    // The user files are the bootstrap data's, byte for byte.
    const before = parseGuestCloudConfig(original).files;
    for (const f of USER_FILES) expect(guest.files.find((g) => g.path === f.path)).toEqual(before.find((g) => g.path === f.path));
  });

  it('hostname, providerID and node name reach the kubeadm configuration the node runs', () => {
    expect(guest.hostname).toBe('worker-7');
    const cmd = kubeadmCommand(guest.runcmd)!;
    expect(cmd).toEqual({ verb: 'join', configPath: JOIN_CONFIG_PATH });
    const kc = parseKubeadmConfig(guest.files.find((f) => f.path === cmd.configPath)!.content);
    expect(kc).toEqual({
      kind: 'JoinConfiguration',
      controlPlane: false, // a worker join: no kubeadm mark-control-plane phase
      nodeName: 'worker-7',
      kubeletExtraArgs: { 'volume-plugin-dir': '/opt/libexec/x/', v: '2', 'provider-id': 'hcs://demo/md-0-x7k2p' },
      patchesDirectory: '/etc/kubernetes/patches',
    });
  });

  it('mounts, fs_setup and runcmd; values such as "0644", "on", "1e3" stay strings', () => {
    expect(guest.fsSetup).toEqual([
      { device: '/dev/vdb', filesystem: 'xfs', label: 'dv0', overwrite: false },
      { device: '/dev/vdc', filesystem: 'ext4', label: 'dv1', overwrite: false },
      { device: '/dev/disk/by-id/virtio-0123456789abcdefghij', filesystem: 'xfs', label: 'pd0', overwrite: false },
      { device: '/dev/disk/by-id/virtio-ffffffff-0000-1111-2', filesystem: 'xfs', label: 'pd1', overwrite: false },
    ]);
    expect(guest.mounts).toEqual([
      { device: '/dev/vdb', mountPath: '/var/lib/kubelet', fsType: 'xfs', options: ['defaults', 'nofail'] },
      { device: '/dev/vdc', mountPath: '/var/lib/containerd', fsType: 'ext4', options: ['defaults', 'nofail'] },
      { device: '/dev/disk/by-id/virtio-0123456789abcdefghij', mountPath: '/var/cpaas', fsType: 'xfs', options: ['noatime', 'nodiratime', 'nofail'] },
      { device: '/dev/disk/by-id/virtio-ffffffff-0000-1111-2', mountPath: '/var/cpaas/b', fsType: 'xfs', options: ['defaults', 'nofail'] },
    ]);
    expect(guest.runcmd).toEqual([...SPEC.preKubeadmCommands!, 'kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml && echo success > /run/cluster-api/bootstrap-success.complete', ...SPEC.postKubeadmCommands!]);
    const doc = loadYaml(out) as { mounts: unknown[][]; users: unknown };
    expect(doc.mounts[0]).toEqual(['/dev/vdb', '/var/lib/kubelet', 'xfs', 'defaults,nofail', '0', '2']);
    expect(doc.users).toEqual([{ name: 'core', ssh_authorized_keys: ['ssh-ed25519 AAAA yes'] }]);
  });

  it('reads the same under YAML 1.2 (the `yaml` package) and YAML 1.1 (as PyYAML on the node reads it)', () => {
    const v12 = parseYaml(out) as unknown;
    expect(v12).toEqual(loadYaml(out));
    expect(parseYaml(out, { version: '1.1' })).toEqual(v12);
    for (const s of AMBIGUOUS) {
      expect(out).toContain(`  - "${s}"\n`);
      const one = dumpYaml({ k: s });
      expect(parseYaml(one, { version: '1.1' }), one).toEqual({ k: s });
      expect(parseYaml(one), one).toEqual({ k: s });
    }
  });

  it('is a readable document: multi-line PEM and JSON as block scalars, plain strings unquoted', () => {
    expect(out.startsWith('#cloud-config\n')).toBe(true);
    expect(out).toContain(`  - path: ${KUBELET_CERT_PATH}\n    owner: root:root\n    permissions: "0644"\n    content: |\n      -----BEGIN CERTIFICATE-----\n      MIIB`);
    expect(out).toContain('    content: |\n      {\n        "tlsCertFile": "/etc/kubernetes/pki/kubelet.crt",\n');
    expect(out).toContain('hostname: worker-7\nfqdn: worker-7\n');
    expect(out).toContain('  - - /dev/vdb\n    - /var/lib/kubelet\n    - xfs\n    - defaults,nofail\n    - "0"\n    - "2"\n');
    expect(out).not.toMatch(/&ref|\*ref/);
    // The CAPBK renderer (src/world/capi/cloudinit.ts) writes with the same dumper: no anchors, "0644" quoted for YAML 1.1.
    expect(original).not.toMatch(/&ref|\*ref/);
    expect(original).toContain('    permissions: "0644"\n');
  });
});

describe('cloud-init YAML: plain scalars resolve as the `yaml` package (YAML 1.2 core) resolves them', () => {
  it.each(['0644', '0o14', '0x1F', '-12', '1e3', '1.5', '.inf', '-.Inf', '.NaN', '~', 'null', 'Null', '', 'true', 'False', 'on', 'yes', '1_000', '0b101', '12:30', '2001-12-14', '<<', '+0x1F', 'abc'])('%j', (v) => {
    expect(loadYaml(`k: ${v}\n`)).toEqual(parseYaml(`k: ${v}\n`));
    expect(loadYaml(`k: "${v}"\n`)).toEqual({ k: v });
  });

  it('numbers and booleans are written back as themselves', () => {
    const v = { i: 644, n: -3, f: 1.5, e: 1e-7, inf: -Infinity, t: true, z: null, s: '644' };
    expect(parseYaml(dumpYaml(v))).toEqual(v);
    expect(loadYaml(dumpYaml(v))).toEqual(v);
  });
});

describe('cloud-init YAML: kubeadm configuration files', () => {
  it('kubeadm init: only the InitConfiguration is re-rendered; the ClusterConfiguration and the comments before it stay byte for byte', () => {
    const cluster = '# the cluster\n---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration   # kept\nkubernetesVersion: v1.31.6\nnetworking: {podSubnet: 10.0.0.0/16}\n';
    const text = `${cluster}--- # init\nkind: InitConfiguration\nnodeRegistration:\n  taints: []\n`;
    const out = patchInitConfiguration(text, 'cp-1', 'hcs://c/m');
    expect(out.startsWith(cluster)).toBe(true);
    expect(out.slice(cluster.length)).toBe('--- # init\nkind: InitConfiguration\nnodeRegistration:\n  taints: []\n  name: cp-1\n  kubeletExtraArgs:\n    provider-id: hcs://c/m\n');
  });

  it('the init file CAPBK renders: ClusterConfiguration untouched, InitConfiguration patched', () => {
    const original = renderInitCloudInit({ spec: SPEC, controlPlaneEndpoint: '192.168.1.10:6443', clusterName: 'demo', kubernetesVersion: 'v1.31.6', token: 'abcdef.0123456789abcdef', caCertPem: PEM, caKeyPem: KEY });
    const init = (text: string): string => parseGuestCloudConfig(text).files.find((f) => f.path === INIT_CONFIG_PATH)!.content;
    const before = init(original);
    const after = init(injectCloudInit(original, INJ));
    const clusterDoc = before.slice(0, before.indexOf('---\n', 4));
    expect(clusterDoc).toContain('kind: ClusterConfiguration');
    expect(after.startsWith(clusterDoc)).toBe(true);
    expect(parseKubeadmConfig(after)).toMatchObject({ kind: 'InitConfiguration', nodeName: 'worker-7', kubeletExtraArgs: { 'provider-id': INJ.providerID } });
  });

  it('a document written on its marker line, or after `...` without a marker, is found and patched too', () => {
    const inline = patchJoinConfiguration('kind: Other\n--- {kind: JoinConfiguration, nodeRegistration: {name: old}}\n', 'n1', 'p1');
    expect(inline).toBe('kind: Other\n---\nkind: JoinConfiguration\nnodeRegistration:\n  name: n1\n  kubeletExtraArgs:\n    provider-id: p1\n');
    const ended = patchJoinConfiguration('kind: Other\n...\nkind: JoinConfiguration\n', 'n2', 'p2');
    expect(parseKubeadmConfig(ended)).toEqual({ kind: 'JoinConfiguration', controlPlane: false, nodeName: 'n2', kubeletExtraArgs: { 'provider-id': 'p2' } });
  });

  it('the v1beta4 list form keeps its order and other entries', () => {
    const out = patchJoinConfiguration('kind: JoinConfiguration\nnodeRegistration:\n  kubeletExtraArgs:\n    - name: v\n      value: "2"\n', 'n1', 'p1');
    expect(out).toBe('kind: JoinConfiguration\nnodeRegistration:\n  kubeletExtraArgs:\n    - name: v\n      value: "2"\n    - name: provider-id\n      value: p1\n  name: n1\n');
  });
});

describe('cloud-init YAML: malformed input gives the same kind of error', () => {
  it('the provider refuses a bootstrap document that is not YAML with a BOOT-2 reason (CloudInitError)', () => {
    for (const [text, why] of [
      ['#cloud-config\nwrite_files: [\n', /bootstrap cloud-config does not parse as YAML: .* at line \d+, column \d+$/],
      ['#cloud-config\nruncmd: []\nruncmd: []\n', /does not parse as YAML: duplicated mapping key/],
      ['#cloud-config\na: 1\n---\nb: 2\n', /does not parse as YAML/],
      [`#cloud-config\nwrite_files:\n  - path: ${JOIN_CONFIG_PATH}\n    content: !!binary aGk=\n`, /does not parse as YAML: unknown tag/],
      ['#cloud-config\n- a\n', /must be a YAML mapping/],
      ['{"ignition":{}}', /"#cloud-config"/],
    ] as const) {
      expect(() => injectCloudInit(text, noInj), text).toThrow(CloudInitError);
      expect(() => injectCloudInit(text, noInj), text).toThrow(why);
    }
  });

  it('a kubeadm file that is not YAML, or whose nodeRegistration is not a mapping, is a BOOT-2 reason too', () => {
    const withJoin = (content: string): string => `#cloud-config\nwrite_files:\n  - path: ${JOIN_CONFIG_PATH}\n    content: ${JSON.stringify(content)}\n`;
    expect(() => injectCloudInit(withJoin('kind: JoinConfiguration\nnodeRegistration: [a\n'), noInj)).toThrow(/kubeadm-join-config\.yaml does not parse as YAML/);
    expect(() => injectCloudInit(withJoin('kind: JoinConfiguration\nnodeRegistration: x\n'), noInj)).toThrow(CloudInitError);
    expect(() => injectCloudInit(withJoin('kind: JoinConfiguration\nnodeRegistration:\n  kubeletExtraArgs: x\n'), noInj)).toThrow(/kubeletExtraArgs is neither a map nor a list/);
    expect(() => injectCloudInit(withJoin('kind: InitConfiguration\n'), noInj)).toThrow(/kubeadm-join-config\.yaml holds no JoinConfiguration document/);
  });

  it('the guest refuses user data that is not YAML (GuestCloudInitError); a kubeadm file that is not YAML holds no configuration', () => {
    expect(() => parseGuestCloudConfig('#cloud-config\nwrite_files: [\n')).toThrow(GuestCloudInitError);
    expect(() => parseGuestCloudConfig('#cloud-config\nwrite_files: [\n')).toThrow(/user data does not parse as YAML: .* at line \d+, column \d+$/);
    expect(() => parseGuestCloudConfig('ignition')).toThrow(/#cloud-config/);
    expect(parseKubeadmConfig('kind: JoinConfiguration\nnodeRegistration: [a\n')).toBeUndefined();
  });

  it('aliases are written back as anchors, never expanded (an alias bomb stays small)', () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++) levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
    const bomb = `#cloud-config\n${levels.join('\n')}\nwrite_files:\n  - path: ${JOIN_CONFIG_PATH}\n    content: "kind: JoinConfiguration\\n"\n`;
    const out = injectCloudInit(bomb, noInj);
    expect(out.length).toBeLessThan(20_000);
    expect(out).toMatch(/&ref_\d+/);
  });
});
