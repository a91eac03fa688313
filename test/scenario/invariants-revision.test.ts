/**
 * The invariants run again only when something they read changed
 * (World.revision, src/harness/scenario/invariants.ts): the revision moves with every
 * write to the management cluster, to a workload cluster and to the cloud,
 * and stays put while nothing is written; a check at an unchanged revision
 * reads nothing, and a violation that a change brings is still reported at
 * the next check (DISK-9, POOL-4).
 */
import { describe, expect, it } from 'vitest';
import { runningCluster } from './fixtures.js';
import type { HCSMachine } from '../../src/product/api/hcs.js';
import type { Node } from '../../src/product/api/core.js';
import { InvariantMonitor } from '../../src/harness/scenario/invariants.js';
import type { World } from '../../src/harness/scenario/world.js';


/** The testbed's world, counting the cloud reads the invariants make. */
function counting(world: World, withRevision = true): { world: World; reads: () => number } {
  let reads = 0;
  const cloud = { ...world.cloud, listVolumes: () => (reads++, world.cloud.listVolumes()) };
  const w: World = { ...world, cloud };
  if (!withRevision) delete w.revision;
  return { world: w, reads: () => reads };
}

describe('invariants: re-checked only after a change (World.revision)', () => {
  it('the revision moves with management, workload and cloud writes, and only with them', async () => {
    const tb = await runningCluster();
    const rev = (): string => tb.world.revision!();
    const r0 = rev();
    tb.env.mgmt.listSync('Machine');
    tb.world.cloud.listVolumes();
    expect(rev()).toBe(r0);
    const hm = tb.env.mgmt.listSync<HCSMachine>('HCSMachine')[0]!;
    await tb.env.mgmt.update({ ...hm, metadata: { ...hm.metadata, labels: { ...hm.metadata.labels, touched: 'yes' } } });
    const r1 = rev();
    expect(r1).not.toBe(r0);
    const wl = tb.env.workloads.client('cpaas-system', 'demo');
    const node = (await wl.list<Node>('Node'))[0]!;
    await wl.update({ ...node, metadata: { ...node.metadata, labels: { ...node.metadata.labels, touched: 'yes' } } });
    const r2 = rev();
    expect(r2).not.toBe(r1);
    await tb.hcs.deleteServers([hm.spec.serverId!], { deleteVolume: false });
    expect(rev()).not.toBe(r2);
    await tb.close();
  });

  it('an unchanged revision skips the check; the change after it is checked and its violation reported', async () => {
    const tb = await runningCluster();
    const { world, reads } = counting(tb.world);
    const mon = new InvariantMonitor(world, () => tb.events.all());
    expect(await mon.check()).toEqual([]);
    const n = reads();
    expect(n).toBeGreaterThan(0);
    expect(await mon.check()).toEqual([]);
    expect(reads()).toBe(n);
    const [a, b] = tb.env.mgmt.listSync<HCSMachine>('HCSMachine');
    await tb.env.mgmt.updateStatus({ ...b!, status: { ...b!.status, hostname: a!.status!.hostname } });
    const v = await mon.check();
    expect(reads()).toBeGreaterThan(n);
    expect(v.map((x) => x.rule)).toContain('POOL-4');
    await tb.close();
  });

  it('a cloud change alone (a server deleted with its persistent disk) is checked: DISK-9', async () => {
    const tb = await runningCluster();
    const mon = new InvariantMonitor(tb.world, () => tb.events.all());
    expect(await mon.check()).toEqual([]);
    const hm = tb.env.mgmt.listSync<HCSMachine>('HCSMachine')[0]!;
    const before = tb.world.revision!();
    await tb.hcs.deleteServers([hm.spec.serverId!], { deleteVolume: true });
    // Straight after the call, before any controller reacted: only the cloud changed.
    expect(tb.world.revision!()).not.toBe(before);
    await tb.sim.advance(60_000);
    expect((await mon.check()).map((x) => x.rule)).toContain('DISK-9');
    await tb.close();
  });

  it('without a revision (a remote management cluster) every check runs', async () => {
    const tb = await runningCluster();
    const { world, reads } = counting(tb.world, false);
    const mon = new InvariantMonitor(world, () => tb.events.all());
    await mon.check();
    const n = reads();
    await mon.check();
    expect(reads()).toBe(2 * n);
    await tb.close();
  });
});
