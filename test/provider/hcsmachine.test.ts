import { afterEach, describe, expect, it } from 'vitest';
import type { DiskClaimer } from '../../src/product/provider/index.js';
import { createHarness, nodeReadyStatus, workerPoolConfigs, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('HCSMachine lifecycle', () => {
  it('POOL-4, DISK-3, TPL-4: create → server ACTIVE with the pool IP, disk created and attached, Node Ready', async () => {
    h = await createHarness();
    await h.createMachine('md-0-aaaaa');
    const ok = await h.runUntil(async () => nodeReadyStatus(await h!.node('worker-1')) === 'True');
    const hm = await h.hcsMachine('md-0-aaaaa');
    expect(hm?.status?.conditions, JSON.stringify(hm?.status)).toBeDefined();
    expect(ok, `${JSON.stringify(hm?.status)} guest=${JSON.stringify(h.guests.status('worker-1'))}`).toBe(true);
    expect(hm!.status!.ready).toBe(true);
    expect(hm!.status!.hostname).toBe('worker-1');
    expect(hm!.spec.providerID).toBe('hcs://demo/md-0-aaaaa');
    expect(hm!.spec.serverId).toBeTruthy();
    expect(hm!.status!.addresses).toContainEqual({ type: 'InternalIP', address: '192.168.10.11' });
    const srv = h.cloud.hypervisor.server(hm!.spec.serverId!)!;
    expect(srv.status).toBe('ACTIVE');
    expect(srv.ips).toEqual(['192.168.10.11']);
    const pool = await h.pool();
    const entry = pool.status!.entries!.find((e) => e.hostname === 'worker-1')!;
    expect(entry.machine).toBe('md-0-aaaaa');
    const disk = entry.persistentDisks![0]!;
    expect(disk.volumeId).toBeTruthy();
    const vol = h.cloud.hypervisor.volume(disk.volumeId!)!;
    expect(vol.attachedTo).toBe(srv.id);
    expect(vol.fs.fsType).toBe('xfs');
    expect(vol.fs.label).toBe('pd0');
    const node = await h.node('worker-1');
    expect(node!.spec.providerID).toBe('hcs://demo/md-0-aaaaa');
    expect(node!.status!.nodeInfo!.kubeletVersion).toBe('v1.31.6');
    expect(h.guests.status('worker-1')?.phase).toBe('Joined');
    expect(h.guests.mounts('worker-1').map((m) => `${m.mountPath}:${m.persistent}`).sort()).toEqual(['/:false', '/var/cpaas:true', '/var/lib/containerd:false', '/var/lib/kubelet:false']);
  });
});

describe('deletion and replacement', () => {
  it('DISK-9, POOL-4: delete → server gone, persistent disk detached and still present, pool entry released', async () => {
    h = await createHarness();
    await h.createMachine('md-0-aaaaa');
    expect(await h.runUntil(async () => nodeReadyStatus(await h!.node('worker-1')) === 'True')).toBe(true);
    const hm = (await h.hcsMachine('md-0-aaaaa'))!;
    const serverId = hm.spec.serverId!;
    const volId = (await h.pool()).status!.entries![0]!.persistentDisks![0]!.volumeId!;
    const srv = h.cloud.hypervisor.server(serverId)!;
    const ephemeral = srv.volumes.filter((v) => v.volumeId !== volId).map((v) => v.volumeId);
    expect(ephemeral).toHaveLength(3); // root + 2 data volumes (TPL-3)
    await h.deleteMachine('md-0-aaaaa');
    expect(await h.hcsMachine('md-0-aaaaa')).toBeUndefined();
    expect(h.cloud.hypervisor.server(serverId)).toBeUndefined();
    const vol = h.cloud.hypervisor.volume(volId)!;
    expect(vol.status).toBe('available');
    expect(vol.attachedTo).toBeUndefined();
    for (const id of ephemeral) expect(h.cloud.hypervisor.volume(id)).toBeUndefined();
    await h.env.sim.advance(2_000); // pool status refresh is debounced
    const pool = await h.pool();
    const entry = pool.status!.entries!.find((e) => e.hostname === 'worker-1')!;
    expect(entry.machine).toBeUndefined();
    expect(pool.status!.available).toBe(3);
    expect(entry.persistentDisks![0]).toMatchObject({ volumeId: volId, phase: 'Available' });
    expect(entry.persistentDisks![0]!.attachedServerId).toBeUndefined();
    // The guest saw the server go: the Node (deleted by CAPI, not by the guest) is Ready Unknown.
    expect(nodeReadyStatus(await h.node('worker-1'))).toBe('Unknown');
    expect(h.guests.status('worker-1')?.phase).toBe('Stopped');
  });

  it('DISK-3, DISK-8: a replacement with the same pool entry re-attaches the same volume and the data survives', async () => {
    h = await createHarness({ configs: workerPoolConfigs(1) });
    await h.createMachine('md-0-aaaaa');
    expect(await h.runUntil(() => h!.guests.status('worker-1')?.phase === 'Joined')).toBe(true);
    const volId = (await h.pool()).status!.entries![0]!.persistentDisks![0]!.volumeId!;
    h.guests.writeFile('worker-1', '/var/cpaas/data/state.json', '{"v":1}');
    h.guests.writeFile('worker-1', '/var/lib/kubelet/ephemeral.txt', 'gone after replacement');
    h.guests.writeFile('worker-1', '/root/notes.txt', 'root volume');
    expect(h.cloud.hypervisor.readFile(volId, '/data/state.json')).toBe('{"v":1}');
    await h.deleteMachine('md-0-aaaaa');
    await h.createMachine('md-0-bbbbb');
    expect(await h.runUntil(async () => nodeReadyStatus(await h!.node('worker-1')) === 'True' && h!.guests.status('worker-1')?.phase === 'Joined')).toBe(true);
    const pool = await h.pool();
    expect(pool.status!.entries![0]!.machine).toBe('md-0-bbbbb');
    expect(pool.status!.entries![0]!.persistentDisks![0]!.volumeId).toBe(volId);
    const hm = (await h.hcsMachine('md-0-bbbbb'))!;
    expect(h.cloud.hypervisor.volume(volId)!.attachedTo).toBe(hm.spec.serverId);
    expect(h.guests.readFile('worker-1', '/var/cpaas/data/state.json')).toBe('{"v":1}');
    expect(h.guests.readFile('worker-1', '/var/lib/kubelet/ephemeral.txt')).toBeUndefined();
    expect(h.guests.readFile('worker-1', '/root/notes.txt')).toBeUndefined();
    // Only one persistent volume was ever created for (worker-1, slot 0).
    expect(h.cloud.hypervisor.listVolumes().filter((v) => v.metadata['hcs.io/persistent'] === 'true')).toHaveLength(1);
    expect(h.env.events.all().some((e) => e.type === 'guest.disk-kept' && e.rules?.includes('DISK-8'))).toBe(true);
    // The replacement re-registered the Node with its own providerID.
    expect((await h.node('worker-1'))!.spec.providerID).toBe('hcs://demo/md-0-bbbbb');
  });

  it('DISK-3: a claimer that forgets identities loses the data (the checks can fail)', async () => {
    const forgetful: DiskClaimer = {
      find: async () => undefined,
      async claim(req) {
        // Broken on purpose: a fresh volume for every machine, ignoring (hostname, slot).
        const res = await h!.hcs.createVolume({ volume: { name: `broken-${req.hostname}-${h!.env.clock.now()}`, size: req.size, volume_type: req.type, availability_zone: req.availabilityZone } });
        return { volumeId: res.volume_ids[0]!, name: 'broken', status: 'creating', attachedServerIds: [], created: true, warnings: [] };
      },
    };
    h = await createHarness({ configs: workerPoolConfigs(1), diskClaimer: forgetful });
    await h.createMachine('md-0-aaaaa');
    expect(await h.runUntil(() => h!.guests.status('worker-1')?.phase === 'Joined')).toBe(true);
    h.guests.writeFile('worker-1', '/var/cpaas/marker', 'x');
    await h.deleteMachine('md-0-aaaaa');
    await h.createMachine('md-0-bbbbb');
    expect(await h.runUntil(() => h!.guests.status('worker-1')?.phase === 'Joined' && h!.guests.serverOf('worker-1') !== undefined)).toBe(true);
    expect(await h.runUntil(async () => (await h!.hcsMachine('md-0-bbbbb'))?.status?.ready === true)).toBe(true);
    expect(h.guests.readFile('worker-1', '/var/cpaas/marker')).toBeUndefined();
  });
});

describe('determinism', () => {
  it('POOL-4, DISK-3: the same seed gives the same event log, byte for byte', async () => {
    const run = async (): Promise<string> => {
      const x = await createHarness({ seed: 11, configs: workerPoolConfigs(2) });
      try {
        await x.createMachine('md-0-aaaaa');
        await x.createMachine('md-0-bbbbb');
        await x.runUntil(async () => nodeReadyStatus(await x.node('worker-2')) === 'True' && nodeReadyStatus(await x.node('worker-1')) === 'True');
        await x.deleteMachine('md-0-aaaaa');
        // Certificates carry fresh random keys (webcrypto), so compare everything but their bytes.
        return x.env.events.toJsonLines().replace(/-----BEGIN[^-]+-----[^-]+-----END[^-]+-----/g, 'PEM');
      } finally {
        await x.close();
      }
    };
    const a = await run();
    const b = await run();
    expect(a.length).toBeGreaterThan(1000);
    expect(a).toBe(b);
  });
});
