import { afterEach, describe, expect, it } from 'vitest';
import { kubeadmCommand, parseGuestCloudConfig, parseKubeadmConfig } from '../../src/world/guest/index.js';
import { createHarness, nodeReadyStatus, workerPoolConfigs, type Harness } from '../provider/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('guest', () => {
  it('DISK-8: writes route through the mounts: persistent disk, data volume, root volume', async () => {
    h = await createHarness({ configs: workerPoolConfigs(1) });
    await h.createMachine('md-0-aaaaa');
    expect(await h.runUntil(() => h!.guests.status('worker-1')?.phase === 'Joined')).toBe(true);
    const mounts = Object.fromEntries(h.guests.mounts('worker-1').map((m) => [m.mountPath, m]));
    h.guests.writeFile('worker-1', '/var/cpaas/a.txt', 'A');
    h.guests.writeFile('worker-1', '/var/lib/kubelet/b.txt', 'B');
    h.guests.writeFile('worker-1', '/etc/c.txt', 'C');
    const hv = h.cloud.hypervisor;
    expect(hv.readFile(mounts['/var/cpaas']!.volumeId, '/a.txt')).toBe('A');
    expect(hv.readFile(mounts['/var/lib/kubelet']!.volumeId, '/b.txt')).toBe('B');
    expect(hv.readFile(mounts['/']!.volumeId, '/etc/c.txt')).toBe('C');
    // kubeadm's kubelet config landed on the /var/lib/kubelet data volume, the injected key on the root volume.
    expect(hv.readFile(mounts['/var/lib/kubelet']!.volumeId, '/config.yaml')).toContain('KubeletConfiguration');
    expect(hv.readFile(mounts['/']!.volumeId, '/etc/kubernetes/pki/kubelet.key')).toContain('PRIVATE KEY');
    expect(h.guests.readFile('worker-1', '/var/cpaas/a.txt')).toBe('A');
    expect(h.guests.status('nope')).toBeUndefined();
    expect(() => h!.guests.writeFile('nope', '/x', 'y')).toThrow(/no running node/);
  });

  it('DISK-3: the guest waits for persistent disks before mounting, and only formats unformatted devices', async () => {
    h = await createHarness({ configs: workerPoolConfigs(1) });
    await h.createMachine('md-0-aaaaa');
    expect(await h.runUntil(() => h!.guests.status('worker-1')?.phase === 'Joined')).toBe(true);
    const formatted = h.env.events.all().filter((e) => e.type === 'guest.disk-formatted');
    expect(formatted).toHaveLength(3); // two data volumes + the new persistent disk
    await h.deleteMachine('md-0-aaaaa');
    expect(h.guests.mounts('worker-1')).toEqual([]);
    expect(h.guests.status('worker-1')?.phase).toBe('Stopped');
    await h.createMachine('md-0-bbbbb');
    expect(await h.runUntil(() => h!.guests.status('worker-1')?.phase === 'Joined')).toBe(true);
    const again = h.env.events.all().filter((e) => e.type === 'guest.disk-formatted');
    expect(again).toHaveLength(5); // only the two new data volumes
    expect(h.env.events.all().filter((e) => e.type === 'guest.disk-kept')).toHaveLength(1);
  });

  it('HCS-1: a server deleted after joining leaves its Node Ready Unknown (CAPI deletes the Node)', async () => {
    h = await createHarness({ configs: workerPoolConfigs(1) });
    await h.createMachine('md-0-aaaaa');
    expect(await h.runUntil(async () => nodeReadyStatus(await h!.node('worker-1')) === 'True')).toBe(true);
    const serverId = (await h.hcsMachine('md-0-aaaaa'))!.spec.serverId!;
    await h.hcs.deleteServers([serverId], { deleteVolume: false });
    expect(await h.runUntil(async () => nodeReadyStatus(await h!.node('worker-1')) === 'Unknown')).toBe(true);
    expect(await h.node('worker-1')).toBeDefined();
  });

  it('BOOT-2: parses cloud-config, kubeadm configs and the join command', () => {
    const cc = parseGuestCloudConfig('#cloud-config\nhostname: n1\nwrite_files:\n  - path: /a\n    encoding: b64\n    content: aGk=\nmounts:\n  - [/dev/vdb, /data, xfs, "defaults,nofail", "0", "2"]\nruncmd:\n  - [sh, -c, "kubeadm join --config /tmp/j.yaml"]\n');
    expect(cc.hostname).toBe('n1');
    expect(cc.files[0]).toMatchObject({ path: '/a', content: 'hi' });
    expect(cc.mounts[0]).toEqual({ device: '/dev/vdb', mountPath: '/data', fsType: 'xfs', options: ['defaults', 'nofail'] });
    expect(kubeadmCommand(cc.runcmd)).toEqual({ verb: 'join', configPath: '/tmp/j.yaml' });
    expect(parseKubeadmConfig('kind: JoinConfiguration\nnodeRegistration:\n  name: n1\n  kubeletExtraArgs:\n    provider-id: hcs://c/m\n')).toEqual({
      kind: 'JoinConfiguration',
      nodeName: 'n1',
      kubeletExtraArgs: { 'provider-id': 'hcs://c/m' },
      controlPlane: false,
    });
    // A control plane join (JoinConfiguration.controlPlane) and kubeadm init mark the node as control plane.
    expect(parseKubeadmConfig('kind: JoinConfiguration\ncontrolPlane: {}\n')?.controlPlane).toBe(true);
    expect(parseKubeadmConfig('kind: InitConfiguration\n')?.controlPlane).toBe(true);
    expect(() => parseGuestCloudConfig('not cloud config')).toThrow(/#cloud-config/);
  });
});
