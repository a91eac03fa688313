import { afterEach, describe, expect, it } from 'vitest';
import { EvsDiskClaimer, HCSMachineController, MACHINE_CONTROLLER } from '../../src/product/provider/index.js';
import { NS, createHarness, nodeReadyStatus, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const persistentVolumes = (h: Harness) => h.cloud.hypervisor.listVolumes().filter((v) => v.metadata['hcs.io/persistent'] === 'true');
const servers = (h: Harness, name: string) => h.cloud.hypervisor.listServers().filter((s) => s.name === name);

describe('restart safety', () => {
  it('DISK-3, POOL-4: the same HCSMachine reconciled twice concurrently creates one server and one disk', async () => {
    h = await createHarness();
    await h.env.sim.settle(); // HCSCluster ready, pool status initialised
    h.env.manager.crash(MACHINE_CONTROLLER); // keep the queue from running it: we drive it by hand
    await h.createMachine('md-0-aaaaa');
    const key = `${NS}/md-0-aaaaa`;
    const results = await Promise.allSettled([h.provider.machine.reconcile(key), h.provider.machine.reconcile(key), h.provider.machine.reconcile(key)]);
    expect(results.filter((r) => r.status === 'fulfilled').length).toBeGreaterThan(0);
    expect(servers(h, 'md-0-aaaaa')).toHaveLength(1);
    expect(persistentVolumes(h)).toHaveLength(1);
    h.env.manager.restart(MACHINE_CONTROLLER, [key]);
    expect(await h.runUntil(async () => nodeReadyStatus(await h!.node('worker-1')) === 'True')).toBe(true);
    expect(servers(h, 'md-0-aaaaa')).toHaveLength(1);
    expect(persistentVolumes(h)).toHaveLength(1);
    expect((await h.pool()).status!.entries!.filter((e) => e.machine === 'md-0-aaaaa').map((e) => e.hostname)).toEqual(['worker-1']);
  });

  it('TPL-4: a provider that crashed before recording spec.serverId adopts the server instead of creating a second one', async () => {
    h = await createHarness();
    await h.createMachine('md-0-aaaaa');
    expect(await h.runUntil(() => servers(h!, 'md-0-aaaaa').length === 1)).toBe(true);
    const serverId = servers(h, 'md-0-aaaaa')[0]!.id;
    // Crash: the queue is lost and the write of spec.serverId / status never happened.
    h.env.manager.crash(MACHINE_CONTROLLER);
    await h.env.mgmt.patch({ kind: 'HCSMachine', namespace: NS, name: 'md-0-aaaaa' }, 'merge', { spec: { serverId: null, providerID: null } });
    await h.env.mgmt.patch({ kind: 'HCSMachine', namespace: NS, name: 'md-0-aaaaa' }, 'merge', { status: null }, { subresource: 'status' });
    // A brand-new process (fresh controller, fresh disk claimer, no memory) reconciles it.
    const fresh = new HCSMachineController(h.env.ctx, h.hcs, new EvsDiskClaimer(h.hcs));
    await fresh.reconcile(`${NS}/md-0-aaaaa`);
    h.env.manager.restart(MACHINE_CONTROLLER, [`${NS}/md-0-aaaaa`]);
    expect(await h.runUntil(async () => (await h!.hcsMachine('md-0-aaaaa'))?.status?.ready === true)).toBe(true);
    const hm = (await h.hcsMachine('md-0-aaaaa'))!;
    expect(hm.spec.serverId).toBe(serverId);
    expect(hm.status!.hostname).toBe('worker-1');
    expect(servers(h, 'md-0-aaaaa')).toHaveLength(1);
    expect(persistentVolumes(h)).toHaveLength(1);
    expect(h.env.events.all().some((e) => e.type === 'hcsmachine.server-adopted')).toBe(true);
  });

  it('DISK-9: a crash in the middle of deletion resumes: the disk is detached, never deleted, the entry released once', async () => {
    h = await createHarness();
    await h.createMachine('md-0-aaaaa');
    expect(await h.runUntil(async () => (await h!.hcsMachine('md-0-aaaaa'))?.status?.ready === true)).toBe(true);
    const volId = persistentVolumes(h)[0]!.id;
    await h.env.mgmt.delete({ kind: 'HCSMachine', namespace: NS, name: 'md-0-aaaaa' });
    await h.env.sim.advance(2_000); // detach requested, not finished
    h.env.manager.crash(MACHINE_CONTROLLER);
    await h.env.sim.advance(60_000);
    h.env.manager.restart(MACHINE_CONTROLLER, [`${NS}/md-0-aaaaa`]);
    expect(await h.runUntil(async () => !(await h!.hcsMachine('md-0-aaaaa')))).toBe(true);
    expect(h.cloud.hypervisor.volume(volId)).toMatchObject({ status: 'available' });
    expect(servers(h, 'md-0-aaaaa')).toHaveLength(0);
    expect((await h.pool()).status!.entries!.every((e) => !e.machine)).toBe(true);
  });
});
