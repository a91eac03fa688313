/**
 * DiskReuseTracker (src/harness/scenario/disk-reuse.ts) on hand-built cloud and cluster states: the
 * DISK-9 "second server" statement, whose window (a replacement holding the disk while the old
 * server of its hostname still exists) the simulated cloud never opens through a single provider
 * bug — the entry's static IPs stay on the old server until it is gone, so the replacement cannot
 * be built before. The state below is the one such a bug pair leaves (the entry released early
 * and the old server's ports freed at its delete request): both POOL-4 and DISK-9 must name it.
 */
import { describe, expect, it } from 'vitest';
import type { KubeClient } from '../../src/core/kube/client.js';
import { DiskReuseTracker } from '../../src/harness/scenario/disk-reuse.js';
import type { World } from '../../src/harness/scenario/world.js';

interface State {
  servers: { id: string; name: string; status: string }[];
  volumes: { id: string; name: string; status: string; metadata: Record<string, string>; attachedTo?: string }[];
  objects: Record<string, unknown[]>;
}

function world(state: State): World {
  const mgmt = { list: async (kind: string) => state.objects[kind] ?? [] } as unknown as KubeClient;
  return {
    mgmt,
    cloud: {
      listServers: () => state.servers,
      server: (id: string) => {
        const s = state.servers.find((x) => x.id === id);
        return s && { ...s, metadata: {}, volumes: state.volumes.filter((v) => v.attachedTo === id).map((v) => ({ volumeId: v.id })) };
      },
      listVolumes: () => state.volumes,
      readFile: () => undefined,
      images: () => [],
    },
    guests: { writeFile: () => undefined, readFile: () => undefined, mounts: () => [] },
  } as unknown as World;
}

const hm = (name: string, serverId: string, deleting = false): unknown => ({
  kind: 'HCSMachine',
  metadata: { name, namespace: 'ns', labels: { 'cluster.x-k8s.io/cluster-name': 'demo' }, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: { serverId, configPoolRef: { name: 'pool' } },
  status: { hostname: 'w1' },
});
const pool = (machine: string): unknown => ({
  kind: 'HCSMachineConfigPool',
  metadata: { name: 'pool', namespace: 'ns' },
  spec: { configs: [{ hostname: 'w1', networks: [], persistentDisks: [{ slot: 0, size: 10, type: 'SSD', mountPath: '/data', format: 'xfs' }] }] },
  status: { entries: [{ hostname: 'w1', machine }] },
});
const vol = (attachedTo?: string): State['volumes'][number] => ({
  id: 'vol-w1-0',
  name: 'demo-w1-pd0',
  status: attachedTo ? 'in-use' : 'available',
  metadata: { 'hcs.io/cluster': 'demo', 'hcs.io/hostname': 'w1', 'hcs.io/slot': '0', 'hcs.io/persistent': 'true' },
  ...(attachedTo ? { attachedTo } : {}),
});

describe('DiskReuseTracker', () => {
  it('flags a disk attached to the replacement while the old server of its hostname still exists (DISK-9) and the early release (POOL-4)', { timeout: 10_000 }, async () => {
    const state: State = {
      servers: [{ id: 'old-server', name: 'm1', status: 'ACTIVE' }],
      volumes: [vol('old-server')],
      objects: { HCSMachine: [hm('m1', 'old-server')], HCSMachineConfigPool: [pool('m1')] },
    };
    const t = new DiskReuseTracker(world(state));
    expect(await t.findings()).toEqual([]);
    // m1 is being deleted: its disk detached, its server still deleting; the bug released the entry to m2, whose server holds the disk.
    state.servers.push({ id: 'new-server', name: 'm2', status: 'ACTIVE' });
    state.volumes = [vol('new-server')];
    state.objects = { HCSMachine: [hm('m1', 'old-server', true), hm('m2', 'new-server')], HCSMachineConfigPool: [pool('m2')] };
    const f = await t.findings();
    expect(f.map((x) => x.rule).sort()).toEqual(['DISK-9', 'POOL-4']);
    expect(f.find((x) => x.rule === 'DISK-9')!.message).toMatch(/persistent volume demo-w1-pd0 \(vol-w1-0\) of hostname w1 slot 0 is in-use on server m2 .* while server m1 \(old-serv, HCSMachine m1\) still serves hostname w1/);
    expect(f.find((x) => x.rule === 'POOL-4')!.message).toMatch(/pool entry w1 of ns\/pool is bound to HCSMachine m2 while server m1 .* of its former holder still exists/);
  });

  it('is silent when the old server is gone before the entry moves (the contract kept)', { timeout: 10_000 }, async () => {
    const state: State = {
      servers: [{ id: 'old-server', name: 'm1', status: 'ACTIVE' }],
      volumes: [vol('old-server')],
      objects: { HCSMachine: [hm('m1', 'old-server')], HCSMachineConfigPool: [pool('m1')] },
    };
    const t = new DiskReuseTracker(world(state));
    expect(await t.findings()).toEqual([]);
    state.servers = [{ id: 'new-server', name: 'm2', status: 'ACTIVE' }];
    state.volumes = [vol('new-server')];
    state.objects = { HCSMachine: [hm('m2', 'new-server')], HCSMachineConfigPool: [pool('m2')] };
    expect(await t.findings()).toEqual([]);
  });
});

describe('markers check: no fallback to a detached volume while the node is up (DISK-8)', () => {
  it('fails when the running node does not show a persistent marker that its old, detached volume still holds', { timeout: 10_000 }, async () => {
    const { CHECKS } = await import('../../src/harness/scenario/checks.js');
    const w = {
      markers: [{ hostname: 'w1', path: '/var/cpaas/marker', content: 'state of w1', volumeId: 'old-vol', persistent: true, mountPath: '/var/cpaas' }],
      guests: { mounts: () => [{ mountPath: '/var/cpaas', volumeId: 'fresh-vol', persistent: true }], readFile: () => undefined, writeFile: () => undefined },
      cloud: { readFile: (id: string) => (id === 'old-vol' ? 'state of w1' : undefined) },
    } as unknown as World;
    const r = await CHECKS.markers!.run(w, {});
    expect(r.ok).toBe(false);
    expect(r.detail).toBe('w1:/var/cpaas/marker missing on the running node: /var/cpaas holds volume fresh-vol, the data was written to volume old-vol');
    // The node gone: the detached volume is where the data lives, and it is read there.
    const gone = { ...w, guests: { ...w.guests, mounts: () => [] } } as unknown as World;
    expect((await CHECKS.markers!.run(gone, {})).ok).toBe(true);
  });
});
