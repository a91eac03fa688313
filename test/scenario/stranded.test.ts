import { describe, expect, it } from 'vitest';
import type { HCSMachine } from '../../src/product/api/hcs.js';
import type { MachineDeployment } from '../../src/product/api/capi.js';
import { loadManifestPath, applyObject } from '../../src/harness/manifests/index.js';
import { InvariantMonitor } from '../../src/harness/scenario/invariants.js';
import { createTestbed, type Testbed } from '../../src/harness/testbed/index.js';

async function runningCluster(): Promise<Testbed> {
  const tb = await createTestbed({ seed: 5 });
  for (const m of loadManifestPath('scenarios/manifests/worker-cluster')) await applyObject(tb.env.mgmt, m.obj);
  const ok = await tb.sim.runUntil(() => tb.env.mgmt.listSync<HCSMachine>('HCSMachine').filter((m) => m.status?.ready).length === 3, 3_600_000);
  expect(ok.ok).toBe(true);
  await tb.sim.advance(300_000); // every Machine Running, the MachineDeployment available
  return tb;
}

describe('stranded data invariant (DISK-8, MD-3)', () => {
  it('DISK-8: a machine serving a hostname whose persistent disk was detached (available, with data) is a violation naming hostname, slot, volume and rule', async () => {
    const tb = await runningCluster();
    const mon = new InvariantMonitor(tb.world, () => tb.events.all());
    expect(await mon.check()).toEqual([]);
    const hm = tb.env.mgmt.listSync<HCSMachine>('HCSMachine').find((m) => m.status?.hostname === 'demo-worker-2')!;
    const disk = tb.world.cloud.listVolumes().find((v) => v.attachedTo === hm.spec.serverId && v.metadata['hcs.io/persistent'] === 'true')!;
    // The provider is down (it would otherwise re-attach the disk): nothing brings it back into service.
    tb.world.crash(['provider']);
    await tb.hcs.detachVolume(hm.spec.serverId!, disk.id);
    await tb.sim.advance(60_000);
    const v = (await mon.check()).filter((x) => x.rule === 'DISK-8');
    expect(v).toHaveLength(1);
    expect(v[0]!.message).toContain(`machine ${hm.metadata.name} serves hostname demo-worker-2`);
    expect(v[0]!.message).toContain(`its slot 0 volume ${disk.name} (${disk.id}), which held data in service, is available`);
    await tb.close();
  }, 60_000);

  it('a scale-in (replicas lowered on purpose) leaves the disk behind without a violation', async () => {
    const tb = await runningCluster();
    const mon = new InvariantMonitor(tb.world, () => tb.events.all());
    expect(await mon.check()).toEqual([]);
    const md = tb.env.mgmt.listSync<MachineDeployment>('MachineDeployment')[0]!;
    await tb.env.mgmt.update({ ...md, spec: { ...md.spec, replicas: 2 } });
    const seen: string[] = [];
    const r = await tb.sim.runUntil(async () => {
      seen.push(...(await mon.check()).map((x) => x.message));
      return tb.world.cloud.listServers().filter((s) => s.status !== 'DELETED').length === 2 && tb.env.mgmt.listSync('Machine').length === 2;
    }, 3_600_000);
    expect(r.ok).toBe(true);
    await tb.sim.advance(60_000);
    seen.push(...(await mon.check()).map((x) => x.message));
    expect(seen).toEqual([]);
    expect(tb.world.cloud.listVolumes().filter((v) => v.metadata['hcs.io/persistent'] === 'true' && v.status === 'available')).toHaveLength(1);
    await tb.close();
  }, 60_000);
});
