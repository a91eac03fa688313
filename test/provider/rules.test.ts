import { afterEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { HCSCluster, HCSMachineConfigPool } from '../../src/product/api/hcs.js';
import { verifyLeaf } from '../../src/core/pki/index.js';
import { EvsDiskClaimer, POOL_REFRESH_MS } from '../../src/product/provider/index.js';
import { CLUSTER, IMAGE_130, KUBELET_PATCH, NS, POOL, createHarness, nodeReadyStatus, workerPoolConfigs, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function cond(obj: { status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] } } | undefined, type: string) {
  return obj?.status?.conditions?.find((c) => c.type === type);
}

async function k8sEvents(h: Harness, reason: string): Promise<{ message: string }[]> {
  return (await h.env.mgmt.list<{ apiVersion: string; kind: string; metadata: { name: string }; reason: string; message: string }>('Event', { namespace: NS })).filter((e) => e.reason === reason);
}

describe('pool entries', () => {
  it('POOL-2: with no free entry the machine waits and reports "no free config pool entry", then takes the released entry (POOL-4)', async () => {
    h = await createHarness({ configs: workerPoolConfigs(1) });
    await h.createMachine('md-0-aaaaa');
    expect(await h.runUntil(async () => (await h!.hcsMachine('md-0-aaaaa'))?.status?.ready === true)).toBe(true);
    await h.createMachine('md-0-bbbbb');
    await h.env.sim.advance(120_000);
    const waiting = await h.hcsMachine('md-0-bbbbb');
    expect(waiting!.spec.serverId).toBeUndefined();
    expect(cond(waiting, 'PoolEntryBound')).toMatchObject({ status: 'False', reason: 'NoFreePoolEntry' });
    expect(cond(waiting, 'PoolEntryBound')!.message).toContain('no free config pool entry');
    expect((await k8sEvents(h, 'NoFreePoolEntry')).length).toBe(1); // reported once, not on every requeue
    expect(h.env.events.all().some((e) => e.source === 'provider' && e.rules?.includes('POOL-2'))).toBe(true);
    expect(h.cloud.hypervisor.listServers()).toHaveLength(1);
    await h.deleteMachine('md-0-aaaaa');
    expect(await h.runUntil(async () => (await h!.hcsMachine('md-0-bbbbb'))?.status?.ready === true)).toBe(true);
    const b = (await h.hcsMachine('md-0-bbbbb'))!;
    expect(b.status!.hostname).toBe('worker-1');
    expect(h.cloud.hypervisor.server(b.spec.serverId!)!.ips).toEqual(['192.168.10.11']);
  });

  it('POOL-4: two machines created together take two different entries in spec order', async () => {
    h = await createHarness({ configs: workerPoolConfigs(2) });
    await h.createMachine('md-0-aaaaa');
    await h.createMachine('md-0-bbbbb');
    expect(await h.runUntil(async () => (await h!.hcsMachine('md-0-aaaaa'))?.status?.ready === true && (await h!.hcsMachine('md-0-bbbbb'))?.status?.ready === true)).toBe(true);
    expect((await h.hcsMachine('md-0-aaaaa'))!.status!.hostname).toBe('worker-1');
    expect((await h.hcsMachine('md-0-bbbbb'))!.status!.hostname).toBe('worker-2');
    const pool = await h.pool();
    expect(pool.status).toMatchObject({ total: 2, available: 0 });
  });

  it('POOL-5, DISK-4: pool status shows every entry and disk; a changed accepted disk field is reported, not applied', async () => {
    h = await createHarness({ configs: workerPoolConfigs(2) });
    await h.createMachine('md-0-aaaaa');
    expect(await h.runUntil(async () => (await h!.hcsMachine('md-0-aaaaa'))?.status?.ready === true)).toBe(true);
    await h.env.sim.advance(POOL_REFRESH_MS + 1_000);
    let pool = await h.pool();
    expect(pool.status!.entries!.map((e) => [e.hostname, e.machine ?? null, e.persistentDisks![0]!.phase])).toEqual([
      ['worker-1', 'md-0-aaaaa', 'Attached'],
      ['worker-2', null, 'Pending'],
    ]);
    const cfgs = structuredClone(pool.spec.configs);
    cfgs[0]!.persistentDisks![0]!.size = 200;
    await h.env.mgmt.patch<HCSMachineConfigPool>({ kind: 'HCSMachineConfigPool', namespace: NS, name: POOL }, 'merge', { spec: { configs: cfgs } });
    await h.env.sim.advance(POOL_REFRESH_MS + 1_000); // pool status refresh is debounced (POOL_REFRESH_MS)
    pool = await h.pool();
    expect(cond(pool, 'DisksAccepted')).toMatchObject({ status: 'False', reason: 'ImmutableFieldChanged' });
    expect(cond(pool, 'DisksAccepted')!.message).toContain('DISK-4');
    expect(pool.status!.entries![0]!.acceptedDisks![0]!.size).toBe(100);
  });
});

describe('bootstrap', () => {
  it('BOOT-2: the kubelet certificate chains to the cluster CA, has CN system:node:<hostname>, O system:nodes and the pool IPs as SANs', async () => {
    h = await createHarness();
    await h.createMachine('md-0-aaaaa');
    expect(await h.runUntil(() => h!.guests.status('worker-1')?.phase === 'Joined')).toBe(true);
    const crt = h.guests.readFile('worker-1', '/etc/kubernetes/pki/kubelet.crt')!;
    const key = h.guests.readFile('worker-1', '/etc/kubernetes/pki/kubelet.key')!;
    const chk = verifyLeaf(crt, key, h.ca.certPem, h.env.clock.now());
    expect(chk.ok, chk.reason).toBe(true);
    expect(chk.subject).toContain('CN=system:node:worker-1');
    expect(chk.subject).toContain('O=system:nodes');
    expect(chk.dnsNames).toEqual(['worker-1']);
    expect(chk.ips).toEqual(['192.168.10.11']);
    // User files are untouched; the join configuration names the node and its provider-id.
    expect(h.guests.readFile('worker-1', '/etc/kubernetes/patches/kubeletconfiguration0+strategic.json')).toBe(KUBELET_PATCH);
    const join = parseYaml(h.guests.readFile('worker-1', '/run/kubeadm/kubeadm-join-config.yaml')!) as { nodeRegistration: { name: string; kubeletExtraArgs: Record<string, string> } };
    expect(join.nodeRegistration.name).toBe('worker-1');
    expect(join.nodeRegistration.kubeletExtraArgs).toEqual({
      'volume-plugin-dir': '/opt/libexec/kubernetes/kubelet-plugins/volume/exec/',
      'provider-id': 'hcs://demo/md-0-aaaaa',
    });
  });

  it('BOOT-3: without the kubelet patch pointing at the injected files the guest does not join', async () => {
    h = await createHarness();
    await h.createMachine('md-0-aaaaa', { kubeletPatch: KUBELET_PATCH.replace('/etc/kubernetes/pki/kubelet.crt', '/var/lib/kubelet/pki/kubelet.crt') });
    expect(await h.runUntil(() => h!.guests.status('worker-1')?.phase === 'JoinFailed')).toBe(true);
    expect(h.guests.status('worker-1')!.reason).toMatch(/^BOOT-3: tlsCertFile \/var\/lib\/kubelet\/pki\/kubelet.crt does not exist/);
    expect(await h.node('worker-1')).toBeUndefined();
    expect(h.env.events.all().some((e) => e.source === 'guest' && e.type === 'guest.join-failed' && e.rules?.includes('BOOT-3'))).toBe(true);
  });

  it('BOOT-4: an image whose Kubernetes version differs from the machine version fails to join', async () => {
    h = await createHarness();
    await h.createMachine('md-0-aaaaa', { version: 'v1.31.6', spec: { imageName: IMAGE_130 } });
    expect(await h.runUntil(() => h!.guests.status('worker-1')?.phase === 'JoinFailed')).toBe(true);
    expect(h.guests.status('worker-1')!.reason).toContain('BOOT-4');
    expect(h.guests.status('worker-1')!.reason).toContain('v1.30.10');
    expect(await h.node('worker-1')).toBeUndefined();
    // The infrastructure is fine: the failure is the guest's (documented "node cannot join" cause).
    expect((await h.hcsMachine('md-0-aaaaa'))!.status!.ready).toBe(true);
  });
});

describe('template and network', () => {
  it('TPL-6: a missing image blocks provisioning with a clear reason and no server', async () => {
    h = await createHarness();
    await h.createMachine('md-0-aaaaa', { spec: { imageName: 'alauda-os-v9.9-k8s-v1.99.0' } });
    await h.env.sim.advance(120_000);
    const hm = await h.hcsMachine('md-0-aaaaa');
    expect(cond(hm, 'InstanceReady')).toMatchObject({ status: 'False', reason: 'ImageNotFound' });
    expect(cond(hm, 'InstanceReady')!.message).toContain('TPL-6');
    expect(h.cloud.hypervisor.listServers()).toHaveLength(0);
    expect((await k8sEvents(h, 'ImageNotFound')).length).toBe(1);
  });

  it('TPL-2: an unknown flavor or availability zone fails provisioning with the valid API values', async () => {
    h = await createHarness();
    await h.createMachine('md-0-aaaaa', { spec: { flavorName: '通用计算型 2核4G' } });
    await h.createMachine('md-0-bbbbb', { spec: { availabilityZone: 'AZ 1 (Beijing)' } });
    await h.env.sim.advance(60_000);
    const a = await h.hcsMachine('md-0-aaaaa');
    expect(a!.status!.failureReason).toBe('InvalidConfiguration');
    expect(a!.status!.failureMessage).toContain('TPL-2');
    expect(a!.status!.failureMessage).toContain('s6.large.2');
    const b = await h.hcsMachine('md-0-bbbbb');
    expect(b!.status!.failureReason).toBe('InvalidConfiguration');
    expect(b!.status!.failureMessage).toMatch(/TPL-2.*az1/);
    expect(h.cloud.hypervisor.listServers()).toHaveLength(0);
  });

  it('NET-4: a pool subnetName missing from HCSCluster.spec.network.subnets blocks the machine with the reason', async () => {
    h = await createHarness({ subnets: [{ name: 'cp-subnet' }] });
    await h.createMachine('md-0-aaaaa');
    await h.env.sim.advance(60_000);
    const hm = await h.hcsMachine('md-0-aaaaa');
    expect(cond(hm, 'InstanceReady')).toMatchObject({ status: 'False', reason: 'SubnetNotResolved' });
    expect(cond(hm, 'InstanceReady')!.message).toMatch(/^NET-4: .*worker-subnet/);
    expect(h.cloud.hypervisor.listServers()).toHaveLength(0);
  });

  it('NET-4: an HCSCluster subnet that does not exist in HCS keeps the cluster not ready', async () => {
    h = await createHarness({ subnets: [{ name: 'no-such-subnet' }] });
    await h.env.sim.settle();
    const hc = await h.env.mgmt.get<HCSCluster>({ kind: 'HCSCluster', namespace: NS, name: CLUSTER });
    expect(hc!.status!.ready).toBe(false);
    expect(cond(hc, 'NetworkReady')!.message).toContain('no-such-subnet');
    expect(h.env.events.all().some((e) => e.type === 'hcscluster.subnets' && e.rules?.includes('NET-4'))).toBe(true);
  });

  it('failure domains: spec.controlPlaneAvailabilityZones that HCS lists as available become status.failureDomains; an unknown zone is reported with TPL-2 and left out', { timeout: 30_000 }, async () => {
    h = await createHarness();
    await h.env.sim.settle();
    const ref = { kind: 'HCSCluster', namespace: NS, name: CLUSTER };
    expect((await h.env.mgmt.get<HCSCluster>(ref))!.status!.failureDomains).toBeUndefined();
    await h.env.mgmt.patch(ref, 'merge', { spec: { controlPlaneAvailabilityZones: ['az2', 'az1', 'az9'] } });
    await h.env.sim.settle();
    const hc = (await h.env.mgmt.get<HCSCluster>(ref))!;
    expect(hc.status!.failureDomains).toEqual({ az1: { controlPlane: true }, az2: { controlPlane: true } });
    expect(h.env.events.all().some((e) => e.type === 'hcscluster.availability-zones' && e.rules?.includes('TPL-2') && e.message.includes('az9'))).toBe(true);
    // Removing the zones removes the failure domains (the Cluster's copy: scenarios/control-plane-failure-domains.yaml).
    await h.env.mgmt.patch(ref, 'merge', { spec: { controlPlaneAvailabilityZones: null } });
    await h.env.sim.settle();
    expect((await h.env.mgmt.get<HCSCluster>(ref))!.status!.failureDomains).toBeUndefined();
  });

  it('NET-5: a name-only subnet appended to a Ready cluster is reported and not used', async () => {
    h = await createHarness({ subnets: [{ name: 'worker-subnet' }] });
    await h.env.sim.settle();
    const ref = { kind: 'HCSCluster', namespace: NS, name: CLUSTER };
    expect((await h.env.mgmt.get<HCSCluster>(ref))!.status!.ready).toBe(true);
    await h.env.mgmt.patch(ref, 'merge', { spec: { network: { subnets: [{ name: 'worker-subnet' }, { name: 'cp-subnet' }] } } });
    await h.env.sim.settle();
    const hc = (await h.env.mgmt.get<HCSCluster>(ref))!;
    expect(hc.status!.ready).toBe(true);
    expect(cond(hc, 'NetworkReady')).toMatchObject({ status: 'False' });
    expect(cond(hc, 'NetworkReady')!.message).toContain('NET-5');
    expect(hc.status!.network!.subnets!.map((s) => s.name)).toEqual(['worker-subnet']);
    // The full object (with its id) is accepted.
    await h.env.mgmt.patch(ref, 'merge', { spec: { network: { subnets: [{ name: 'worker-subnet' }, { name: 'cp-subnet', id: '8a1f0c2e-1b1a-4c8e-9f2d-000000000001' }] } } });
    await h.env.sim.settle();
    expect(cond(await h.env.mgmt.get<HCSCluster>(ref), 'NetworkReady')!.status).toBe('True');
  });
});

describe('persistent disks', () => {
  it('DISK-9: a disk still in use by another server is waited for, never force-detached', async () => {
    h = await createHarness({ configs: workerPoolConfigs(1) });
    const hcs = h.hcs;
    // A rogue server holds the (hostname worker-1, slot 0) volume when the machine comes up.
    const subnet = (await hcs.listSubnets()).find((s) => s.name === 'worker-subnet')!;
    const rogue = await hcs.createServers({
      server: { name: 'rogue', imageRef: (await hcs.listImages())[0]!.id, flavorRef: 's6.large.2', availability_zone: 'az1', vpcid: subnet.vpc_id, nics: [{ subnet_id: subnet.id, ip_address: '192.168.10.50' }], root_volume: { volumetype: 'SSD', size: 40 } },
    });
    const claimed = await new EvsDiskClaimer(hcs).claim({ namespace: NS, cluster: CLUSTER, pool: POOL, hostname: 'worker-1', slot: 0, size: 100, type: 'SSD', availabilityZone: 'az1' });
    const volId = claimed.volumeId;
    expect(await h.runUntil(() => h!.cloud.hypervisor.server(rogue.serverIds[0]!)?.status === 'ACTIVE' && h!.cloud.hypervisor.volume(volId)?.status === 'available')).toBe(true);
    await hcs.attachVolume(rogue.serverIds[0]!, volId);
    await h.createMachine('md-0-aaaaa');
    await h.env.sim.advance(5 * 60_000);
    const a = await h.hcsMachine('md-0-aaaaa');
    expect(cond(a, 'PersistentDisksReady')).toMatchObject({ status: 'False', reason: 'DiskInUse' });
    expect(cond(a, 'PersistentDisksReady')!.message).toContain('DISK-9');
    expect(a!.status!.ready).not.toBe(true);
    expect(h.cloud.hypervisor.volume(volId)!.attachedTo).toBe(rogue.serverIds[0]);
    expect(h.guests.status('worker-1')?.phase).toBe('WaitingForDisks');
    expect((await k8sEvents(h, 'DiskInUse')).length).toBe(1);
    expect(h.cloud.hypervisor.listVolumes().filter((v) => v.metadata['hcs.io/persistent'] === 'true')).toHaveLength(1);
    // Once the rogue server lets go, the machine attaches the same volume and the node joins.
    await hcs.detachVolume(rogue.serverIds[0]!, volId);
    expect(await h.runUntil(async () => (await h!.hcsMachine('md-0-aaaaa'))?.status?.ready === true && nodeReadyStatus(await h!.node('worker-1')) === 'True')).toBe(true);
    expect(h.cloud.hypervisor.volume(volId)!.attachedTo).toBe((await h.hcsMachine('md-0-aaaaa'))!.spec.serverId);
  });

  it('DISK-6: a disk appended to a running machine entry is created but only attached on replacement', async () => {
    h = await createHarness({ configs: workerPoolConfigs(1) });
    await h.createMachine('md-0-aaaaa');
    expect(await h.runUntil(() => h!.guests.status('worker-1')?.phase === 'Joined')).toBe(true);
    const pool = await h.pool();
    const cfgs = structuredClone(pool.spec.configs);
    cfgs[0]!.persistentDisks!.push({ slot: 1, size: 50, type: 'SSD', mountPath: '/var/log/cpaas', format: 'xfs' });
    await h.env.mgmt.patch({ kind: 'HCSMachineConfigPool', namespace: NS, name: POOL }, 'merge', { spec: { configs: cfgs } });
    await h.env.sim.advance(60_000);
    const pd1 = h.cloud.hypervisor.listVolumes().find((v) => v.metadata['hcs.io/slot'] === '1');
    expect(pd1).toBeDefined();
    expect(pd1!.attachedTo).toBeUndefined();
    expect(h.guests.mounts('worker-1').some((m) => m.mountPath === '/var/log/cpaas')).toBe(false);
    await h.deleteMachine('md-0-aaaaa');
    await h.createMachine('md-0-bbbbb');
    expect(await h.runUntil(() => h!.guests.status('worker-1')?.phase === 'Joined' && h!.guests.mounts('worker-1').some((m) => m.mountPath === '/var/log/cpaas'))).toBe(true);
    expect(h.cloud.hypervisor.volume(pd1!.id)!.fs.label).toBe('pd1');
  });
});
