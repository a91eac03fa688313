/**
 * OPS-2: every stuck state the documents list is visible as a condition and a
 * Warning Event with the reason and the rule; the machine recovers once the
 * cause is gone. Cloud faults come from mock-hcs fault injection (HCS-6).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Condition } from '../../src/product/api/capi.js';
import type { HCSCluster } from '../../src/product/api/hcs.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import { COND_DISKS, COND_INSTANCE, STUCK_AFTER_MS } from '../../src/product/provider/index.js';
import { CLUSTER, NS, createHarness, nodeReadyStatus, workerPoolConfigs, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const cond = async (h: Harness, name: string, type: string): Promise<Condition | undefined> => (await h.hcsMachine(name))?.status?.conditions?.find((c) => c.type === type);
const warnings = async (h: Harness, name: string): Promise<{ reason: string; message: string }[]> =>
  (await h.env.mgmt.list<KubeObject & { reason: string; message: string; type: string; involvedObject: { name: string } }>('Event', { namespace: NS }))
    .filter((e) => e.type === 'Warning' && e.involvedObject.name === name)
    .map((e) => ({ reason: e.reason, message: e.message }));
const servers = (h: Harness) => h.cloud.hypervisor.listServers();
const ready = async (h: Harness, name: string) => (await h.hcsMachine(name))?.status?.ready === true;

describe('OPS-2: stuck states explain themselves', () => {
  it('OPS-2, HCS-6: no capacity for the flavor (Ecs.0319) → InsufficientCapacity condition and event, no server; provisions once capacity is back', async () => {
    h = await createHarness();
    const id = h.cloud.faults.add({ service: 'ecs', operation: 'createServers', effect: { type: 'capacity' } });
    await h.createMachine('md-0-aaaaa');
    await h.env.sim.advance(3 * 60_000);
    expect(await cond(h, 'md-0-aaaaa', COND_INSTANCE)).toMatchObject({ status: 'False', reason: 'InsufficientCapacity', message: expect.stringMatching(/Ecs\.0319.*no capacity/) });
    expect((await warnings(h, 'md-0-aaaaa')).filter((w) => w.reason === 'InsufficientCapacity')).toHaveLength(1); // once per change, not per retry
    expect(servers(h)).toHaveLength(0);
    h.cloud.faults.remove(id);
    expect(await h.runUntil(() => ready(h!, 'md-0-aaaaa'))).toBe(true);
    expect(servers(h)).toHaveLength(1);
  });

  it('OPS-2, HCS-6: project quota exhausted (Ecs.0001) → QuotaExceeded', async () => {
    h = await createHarness();
    h.cloud.faults.add({ service: 'ecs', operation: 'createServers', effect: { type: 'quota', resource: 'instances' } });
    await h.createMachine('md-0-aaaaa');
    await h.env.sim.advance(2 * 60_000);
    expect(await cond(h, 'md-0-aaaaa', COND_INSTANCE)).toMatchObject({ status: 'False', reason: 'QuotaExceeded', message: expect.stringMatching(/quota/) });
    expect((await warnings(h, 'md-0-aaaaa')).map((w) => w.reason)).toContain('QuotaExceeded');
  });

  it('OPS-2, HCS-5: rejected credentials (401) → CloudAuthenticationFailed on the machine and on the HCSCluster', async () => {
    h = await createHarness();
    await h.env.sim.settle();
    h.cloud.faults.add({ service: 'ims', operation: 'listImages', effect: { type: 'error', status: 401, code: 'APIGW.0301', message: 'Incorrect IAM authentication information' } });
    await h.createMachine('md-0-aaaaa');
    await h.env.sim.advance(2 * 60_000);
    expect(await cond(h, 'md-0-aaaaa', COND_INSTANCE)).toMatchObject({ status: 'False', reason: 'CloudAuthenticationFailed', message: expect.stringMatching(/APIGW\.0301.*credentials/) });
    expect((await warnings(h, 'md-0-aaaaa')).map((w) => w.reason)).toContain('CloudAuthenticationFailed');
    expect(h.env.events.all().some((e) => e.type === 'hcsmachine.waiting' && e.rules?.includes('HCS-5'))).toBe(true);
    await h.close();

    // Wrong secret key: every call fails; the HCSCluster says so.
    h = await createHarness({ secretKey: 'not-the-secret-key-000000000000000000000' });
    await h.env.sim.advance(60_000);
    const hc = await h.env.mgmt.get<HCSCluster>({ kind: 'HCSCluster', namespace: NS, name: CLUSTER });
    expect(hc?.status?.conditions?.find((c) => c.type === 'NetworkReady')).toMatchObject({ status: 'False', reason: 'CloudAuthenticationFailed', message: expect.stringMatching(/APIGW\.0301/) });
    expect((await warnings(h, CLUSTER)).map((w) => w.reason)).toContain('CloudAuthenticationFailed');
  });

  it('OPS-2, NET-7: the pool IP is already used by another port (Ecs.0010) → IPAddressInUse citing NET-7', async () => {
    h = await createHarness();
    await h.env.sim.settle();
    const img = (await h.hcs.listImages({ name: 'alauda-os-v4.1-k8s-v1.31.6' }))[0]!;
    const sub = (await h.hcs.listSubnets()).find((s) => s.name === 'worker-subnet')!;
    await h.hcs.createServers({ server: { name: 'intruder', imageRef: img.id, flavorRef: 's6.large.2', availability_zone: 'az1', vpcid: sub.vpc_id, nics: [{ subnet_id: sub.id, ip_address: '192.168.10.11' }], root_volume: { volumetype: 'SSD', size: 40 } } });
    await h.createMachine('md-0-aaaaa');
    await h.env.sim.advance(2 * 60_000);
    expect(await cond(h, 'md-0-aaaaa', COND_INSTANCE)).toMatchObject({ status: 'False', reason: 'IPAddressInUse', message: expect.stringMatching(/^NET-7: .*Ecs\.0010/) });
    expect(h.env.events.all().some((e) => e.type === 'hcsmachine.waiting' && e.rules?.includes('NET-7'))).toBe(true);
  });

  it('OPS-2, POOL-2: no free pool entry is a condition and an event', async () => {
    h = await createHarness({ configs: [{ hostname: 'worker-1', networks: [{ subnetName: 'worker-subnet', ipAddress: '192.168.10.11' }] }] });
    await h.createMachine('md-0-aaaaa');
    await h.createMachine('md-0-bbbbb');
    await h.env.sim.advance(2 * 60_000);
    const waiting = (await cond(h, 'md-0-aaaaa', 'PoolEntryBound'))?.status === 'False' ? 'md-0-aaaaa' : 'md-0-bbbbb';
    expect(await cond(h, waiting, 'PoolEntryBound')).toMatchObject({ reason: 'NoFreePoolEntry', message: expect.stringMatching(/no free config pool entry/) });
    expect((await warnings(h, waiting)).map((w) => w.reason)).toEqual(['NoFreePoolEntry']);
  });

  it('OPS-2, HCS-6: a server error that still created the server (partial 500) leaves exactly one server', async () => {
    h = await createHarness();
    h.cloud.faults.add({ service: 'ecs', operation: 'createServers', effect: { type: 'partial' }, count: 1 });
    await h.createMachine('md-0-aaaaa');
    expect(await h.runUntil(async () => nodeReadyStatus(await h!.node('worker-1')) === 'True')).toBe(true);
    expect(servers(h).filter((s) => s.name === 'md-0-aaaaa')).toHaveLength(1);
    expect(h.env.events.all().some((e) => e.type === 'hcsmachine.waiting' && /CloudError/.test(e.message))).toBe(true);
  });

  it('OPS-2, DISK-9: a detach stuck in HCS is reported after a while; the server is not deleted until the disk is free, and the disk survives', async () => {
    h = await createHarness();
    await h.createMachine('md-0-aaaaa');
    expect(await h.runUntil(() => ready(h!, 'md-0-aaaaa'))).toBe(true);
    const vol = h.cloud.hypervisor.listVolumes().find((v) => v.metadata['hcs.io/persistent'] === 'true')!;
    h.cloud.faults.add({ service: 'ecs', operation: 'detachVolume', effect: { type: 'stuck' } });
    await h.env.mgmt.delete({ kind: 'HCSMachine', namespace: NS, name: 'md-0-aaaaa' });
    await h.env.sim.advance(STUCK_AFTER_MS.detach / 2);
    expect((await cond(h, 'md-0-aaaaa', COND_INSTANCE))?.reason).toBe('DetachingDisks');
    await h.env.sim.advance(STUCK_AFTER_MS.detach);
    expect(await cond(h, 'md-0-aaaaa', COND_INSTANCE)).toMatchObject({ status: 'False', reason: 'DiskDetachStuck', message: expect.stringMatching(/has not finished for over 5m/) });
    expect((await warnings(h, 'md-0-aaaaa')).map((w) => w.reason)).toEqual(['DiskDetachStuck']);
    expect(servers(h).filter((s) => s.name === 'md-0-aaaaa')).toHaveLength(1);
    h.cloud.faults.clear();
    h.cloud.faults.releaseStuck();
    expect(await h.runUntil(async () => !(await h!.hcsMachine('md-0-aaaaa')))).toBe(true);
    expect(h.cloud.hypervisor.volume(vol.id)).toMatchObject({ status: 'available' });
  });

  it('OPS-2, DISK-9, HCS-2: a detach job that times out (FAIL, disk still in-use) is reported with the cloud\'s reason and asked for again; the server goes only once the disk is free', async () => {
    h = await createHarness();
    await h.createMachine('md-0-aaaaa');
    expect(await h.runUntil(() => ready(h!, 'md-0-aaaaa'))).toBe(true);
    const vol = h.cloud.hypervisor.listVolumes().find((v) => v.metadata['hcs.io/persistent'] === 'true')!;
    // Two detaches time out after 10 minutes each; the third goes through.
    h.cloud.faults.add({ service: 'ecs', operation: 'detachVolume', effect: { type: 'timeout', ms: 600_000 }, count: 2 });
    await h.env.mgmt.delete({ kind: 'HCSMachine', namespace: NS, name: 'md-0-aaaaa' });
    await h.env.sim.advance(STUCK_AFTER_MS.detach + 60_000);
    expect(await cond(h, 'md-0-aaaaa', COND_INSTANCE)).toMatchObject({ reason: 'DiskDetachStuck' });
    expect(h.cloud.hypervisor.volume(vol.id)).toMatchObject({ status: 'detaching' });
    await h.env.sim.advance(600_000);
    // The first job ended FAIL: the disk is in-use again; the provider says why and asks again.
    expect(await cond(h, 'md-0-aaaaa', COND_INSTANCE)).toMatchObject({
      reason: 'DiskDetachStuck',
      message: expect.stringMatching(/\(detaching, attempt 2; the previous detach job \w+ ended FAIL: Ecs\.0002 detachVolume timed out after 600s[^)]*\)/),
    });
    const failedEvents = (await warnings(h, 'md-0-aaaaa')).filter((w) => w.reason === 'DiskDetachFailed');
    expect(failedEvents).toHaveLength(1);
    expect(failedEvents[0]!.message).toMatch(/is still attached to server \S+: detach job \w+ ended FAIL: Ecs\.0002 .*asking the cloud again \(attempt 2\)\. The server is not deleted while the disk is attached \(DISK-9\)/);
    expect(servers(h).filter((s) => s.name === 'md-0-aaaaa')).toHaveLength(1);
    expect(await h.runUntil(async () => !(await h!.hcsMachine('md-0-aaaaa')))).toBe(true);
    expect((await warnings(h, 'md-0-aaaaa')).filter((w) => w.reason === 'DiskDetachFailed')).toHaveLength(2);
    expect(h.env.events.all().filter((e) => e.type === 'hcsmachine.disk-detach').map((e) => /attempt (\d)/.exec(e.message)?.[1] ?? '1')).toEqual(['1', '2', '3']);
    expect(h.cloud.hypervisor.volume(vol.id)).toMatchObject({ status: 'available' });
  });
});

describe('the next claim of a hostname whose machine is being deleted (issue 14, report 2)', () => {
  it('POOL-2, POOL-4, DISK-9: a machine waiting for an entry says which entry a machine being deleted holds and what its deletion waits for', async () => {
    h = await createHarness({ configs: workerPoolConfigs(1) });
    await h.createMachine('md-0-aaaaa');
    expect(await h.runUntil(() => ready(h!, 'md-0-aaaaa'))).toBe(true);
    h.cloud.faults.add({ service: 'ecs', operation: 'detachVolume', effect: { type: 'timeout', ms: 600_000 } });
    await h.env.mgmt.delete({ kind: 'HCSMachine', namespace: NS, name: 'md-0-aaaaa' });
    await h.createMachine('md-0-bbbbb');
    await h.env.sim.advance(STUCK_AFTER_MS.detach + 60_000);
    expect(await cond(h, 'md-0-bbbbb', 'PoolEntryBound')).toMatchObject({
      status: 'False',
      reason: 'NoFreePoolEntry',
      message: expect.stringContaining('worker-1 is held by HCSMachine md-0-aaaaa, being deleted (DiskDetachStuck): it comes free when that server is gone (POOL-4, DISK-9)'),
    });
    // The cloud recovers: the old server goes, the waiting machine claims worker-1 and the same disk (DISK-3).
    const vol = h.cloud.hypervisor.listVolumes().find((v) => v.metadata['hcs.io/persistent'] === 'true')!;
    h.cloud.faults.clear();
    expect(await h.runUntil(() => ready(h!, 'md-0-bbbbb'))).toBe(true);
    expect((await h.hcsMachine('md-0-bbbbb'))?.status?.hostname).toBe('worker-1');
    const server = servers(h).find((s) => s.name === 'md-0-bbbbb')!;
    expect(h.cloud.hypervisor.volume(vol.id)).toMatchObject({ status: 'in-use', attachedTo: server.id });
  });
});

describe('DISK-7', () => {
  it('DISK-7: a persistent disk mountPath that is also a template dataVolume is refused with the reason; nothing is created', async () => {
    h = await createHarness();
    await h.createMachine('md-0-aaaaa', {
      spec: {
        dataVolumes: [
          { size: 20, type: 'SSD', mountPath: '/var/lib/kubelet', format: 'xfs' },
          { size: 50, type: 'SSD', mountPath: '/var/cpaas/', format: 'xfs' },
        ],
      },
    });
    await h.env.sim.advance(2 * 60_000);
    expect(await cond(h, 'md-0-aaaaa', COND_DISKS)).toMatchObject({
      status: 'False',
      reason: 'MountPathConflict',
      message: expect.stringMatching(/^DISK-7: pool demo-worker-pool entry worker-1 persistentDisks\[slot 0\]\.mountPath \/var\/cpaas is also dataVolumes\[1\]\.mountPath/),
    });
    expect((await warnings(h, 'md-0-aaaaa')).map((w) => w.reason)).toEqual(['MountPathConflict']);
    expect(servers(h)).toHaveLength(0);
    expect(h.cloud.hypervisor.listVolumes()).toHaveLength(0);
  });
});
