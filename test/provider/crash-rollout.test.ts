/**
 * Crash-restart safety of the provider during a worker rollout: the MachineDeployment's
 * infrastructureRef moves to a new HCSMachineTemplate (maxSurge 0, maxUnavailable 1, MD-2/MD-5)
 * while the provider process is killed and restarted at seeded random moments (fresh controller
 * instances, queues lost, full resync) and the guest agents' work queue is dropped too.
 * The end state must have no duplicate servers, no leaked volumes or IPs, no double attachment.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MachineDeployment } from '../../src/product/api/capi.js';
import type { HCSMachine, HCSMachineConfigPool, HCSMachineTemplate } from '../../src/product/api/hcs.js';
import { SeededRng } from '../../src/core/rng.js';
import { GUEST_CONTROLLER } from '../../src/world/guest/index.js';
import type { Testbed } from '../../src/harness/testbed/index.js';
import { NS, bootWorkerCluster, nodesReady } from '../workload/fixture.js';

let tb: Testbed | undefined;
afterEach(async () => {
  await tb?.close();
  tb = undefined;
});

async function rolloutWithCrashes(seed: number, opts: { probability: number; maxStepMs: number }): Promise<{ crashes: number; replaced: number }> {
  tb = await bootWorkerCluster(seed);
  const t = tb;
  const { mgmt } = t.env;
  const rng = new SeededRng(seed * 7919 + 1);
  // TPL-5: a new template (copy, new name) with another flavor.
  const old = (await mgmt.get<HCSMachineTemplate>({ kind: 'HCSMachineTemplate', namespace: NS, name: 'demo-worker-template' }))!;
  await mgmt.create<HCSMachineTemplate>({
    apiVersion: old.apiVersion,
    kind: old.kind,
    metadata: { name: 'demo-worker-template-v2', namespace: NS },
    spec: { template: { spec: { ...old.spec.template.spec, flavorName: 's6.xlarge.2' } } },
  });
  await mgmt.patch<MachineDeployment>({ kind: 'MachineDeployment', namespace: NS, name: 'demo-md-0' }, 'merge', { spec: { template: { spec: { infrastructureRef: { name: 'demo-worker-template-v2' } } } } });

  const done = async (): Promise<boolean> => {
    const hms = await mgmt.list<HCSMachine>('HCSMachine', { namespace: NS });
    return hms.length === 3 && hms.every((m) => m.spec.flavorName === 's6.xlarge.2' && m.status?.ready === true) && (await nodesReady(t)) === 3 && t.cloud.hypervisor.listServers().length === 3;
  };
  const before = new Set(t.cloud.hypervisor.listServers().map((s) => s.id));
  const knownServers = new Set<string>();
  let crashes = 0;
  const deadline = t.clock.now() + 90 * 60_000;
  while (!(await done())) {
    if (t.clock.now() > deadline) throw new Error(`rollout with crashes did not finish (seed ${seed}, ${crashes} crashes)`);
    await t.env.sim.advance(1_000 + Math.floor(rng.next() * opts.maxStepMs));
    for (const s of t.cloud.hypervisor.listServers()) knownServers.add(s.id);
    if (rng.next() < opts.probability) {
      crashes++;
      t.provider.crash();
      t.env.manager.crash(GUEST_CONTROLLER);
      await t.env.sim.advance(Math.floor(rng.next() * 30_000)); // down: queued work and timers are lost
      await t.provider.restart();
      for (const s of t.cloud.hypervisor.listServers()) knownServers.add(s.id);
      t.env.manager.restart(GUEST_CONTROLLER, [...knownServers]);
    }
  }
  await t.env.sim.advance(2 * 60_000); // let the last deletions and pool refreshes settle
  return { crashes, replaced: [...before].filter((id) => !t.cloud.hypervisor.server(id)).length };
}

async function assertClean(t: Testbed): Promise<void> {
  const hv = t.cloud.hypervisor;
  const hms = await t.env.mgmt.list<HCSMachine>('HCSMachine', { namespace: NS });
  const pool = (await t.env.mgmt.get<HCSMachineConfigPool>({ kind: 'HCSMachineConfigPool', namespace: NS, name: 'demo-worker-pool' }))!;
  const servers = hv.listServers().map((s) => hv.server(s.id)!);

  // No duplicate servers: one per HCSMachine, the one it records.
  expect(servers).toHaveLength(3);
  expect(new Set(servers.map((s) => s.name)).size).toBe(3);
  for (const hm of hms) expect(servers.filter((s) => s.id === hm.spec.serverId && s.name === hm.metadata.name)).toHaveLength(1);
  expect(t.env.events.all().filter((e) => e.type === 'hcsmachine.duplicate-servers')).toEqual([]);

  // No leaked IPs: each server has exactly its pool entry's IP, no two servers share one.
  const ips = servers.flatMap((s) => s.ips);
  expect(new Set(ips).size).toBe(ips.length);
  for (const s of servers) {
    const entry = pool.spec.configs.find((c) => c.hostname === s.metadata['hcs.io/hostname'])!;
    expect(s.ips).toEqual(entry.networks.map((n) => n.ipAddress));
  }

  // No leaked volumes: 3 persistent disks + root and 2 data volumes per server, nothing else.
  const vols = hv.listVolumes();
  const persistent = vols.filter((v) => v.metadata['hcs.io/persistent'] === 'true');
  expect(persistent).toHaveLength(3);
  expect(vols).toHaveLength(3 + servers.length * 3);
  expect(vols.filter((v) => v.metadata['hcs.io/persistent'] !== 'true' && !v.attachedTo)).toEqual([]);
  // No double attachment; each disk on the server of its hostname (DISK-3, DISK-9).
  for (const v of persistent) {
    const holders = servers.filter((s) => s.volumes.some((x) => x.volumeId === v.id));
    expect(holders).toHaveLength(1);
    expect(holders[0]!.metadata['hcs.io/hostname']).toBe(v.metadata['hcs.io/hostname']);
  }

  // Pool bindings: one live machine per entry (POOL-4).
  const bound = (pool.status?.entries ?? []).filter((e) => e.machine);
  expect(bound.map((e) => e.machine).sort()).toEqual(hms.map((m) => m.metadata.name).sort());
}

describe('crash-restart during a rolling replacement', () => {
  for (const [seed, probability, maxStepMs] of [
    [1, 0.5, 45_000],
    [2, 0.5, 45_000],
    [3, 0.5, 45_000],
    [4, 1, 10_000], // a restart after every step
  ] as const) {
    it(`DISK-3, DISK-9, POOL-4, TPL-4, MD-2, MD-5: provider restarted ${probability === 1 ? 'at every step' : 'at random steps'} (seed ${seed}): no duplicate servers, no leaked volumes or IPs, no double attachment`, async () => {
      const { crashes, replaced } = await rolloutWithCrashes(seed, { probability, maxStepMs });
      expect(crashes).toBeGreaterThan(probability === 1 ? 20 : 2);
      expect(replaced).toBe(3); // every old server went (MD-5)
      await assertClean(tb!);
      expect(tb!.env.events.all().filter((e) => e.type === 'controller.restarted').length).toBeGreaterThanOrEqual(crashes);
    });
  }
});
