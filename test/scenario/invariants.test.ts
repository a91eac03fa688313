import { describe, expect, it } from 'vitest';
import { runningCluster } from './fixtures.js';
import type { HCSMachine } from '../../src/product/api/hcs.js';
import { InvariantMonitor } from '../../src/harness/scenario/invariants.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import { SeededRng } from '../../src/core/rng.js';
import { generateCA, issueCertificate } from '../../src/core/pki/index.js';


describe('continuous invariants', () => {
  it('a healthy run has no violations, at any instant or at rest', async () => {
    const tb = await runningCluster();
    const mon = new InvariantMonitor(tb.world, () => tb.events.all());
    expect(await mon.check()).toEqual([]);
    expect(await mon.checkAtRest()).toEqual([]);
    await tb.close();
  });

  it('DISK-9: deleting a server with delete_volume while its persistent disk is attached is reported, with the causing event', async () => {
    const tb = await runningCluster();
    const mon = new InvariantMonitor(tb.world, () => tb.events.all());
    await mon.check();
    const hm = tb.env.mgmt.listSync<HCSMachine>('HCSMachine')[0]!;
    await tb.hcs.deleteServers([hm.spec.serverId!], { deleteVolume: true });
    await tb.sim.advance(60_000);
    const v = (await mon.check()).filter((x) => x.rule === 'DISK-9');
    expect(v).toHaveLength(1);
    expect(v[0]!.message).toMatch(/persistent volume demo-demo-worker-\d-pd0 .* was deleted/);
    expect(v[0]!.cause).toMatch(/volume/);
    expect(tb.events.all().find((e) => e.seq === v[0]!.causeSeq)?.source).toBe('cloud');
    // Reported once.
    expect(await mon.check()).toEqual([]);
    await tb.close();
  });

  it('at rest: a server no machine owns is an orphan', async () => {
    const tb = await runningCluster();
    const mon = new InvariantMonitor(tb.world, () => tb.events.all());
    const subnet = tb.cloud.config.subnets.find((s) => s.name === 'worker-subnet')!;
    const image = tb.cloud.config.images[1]!;
    await tb.hcs.createServers({ server: { name: 'stray', imageRef: image.id, flavorRef: 's6.large.2', availability_zone: 'az1', vpcid: subnet.vpc_id, nics: [{ subnet_id: subnet.id }], root_volume: { volumetype: 'SSD', size: 40 } } });
    await tb.sim.advance(120_000);
    const v = await mon.checkAtRest();
    expect(v.map((x) => x.message)).toEqual([expect.stringMatching(/server stray .* is not owned by any HCSMachine/)]);
    await tb.close();
  });

  it('POOL-4: two live machines on one pool entry are reported', async () => {
    const tb = await runningCluster();
    const mon = new InvariantMonitor(tb.world, () => tb.events.all());
    const [a, b] = tb.env.mgmt.listSync<HCSMachine>('HCSMachine');
    await tb.env.mgmt.updateStatus({ ...b!, status: { ...b!.status, hostname: a!.status!.hostname } });
    const v = await mon.check();
    expect(v.map((x) => x.rule)).toContain('POOL-4');
    await tb.close();
  });

  it('MD-1: a rollout that takes down more machines than maxUnavailable is reported', async () => {
    const tb = await runningCluster();
    const mon = new InvariantMonitor(tb.world, () => tb.events.all());
    await tb.sim.advance(60_000);
    expect(await mon.check()).toEqual([]);
    const t = tb.env.mgmt.getSync<KubeObject>({ kind: 'HCSMachineTemplate', namespace: 'cpaas-system', name: 'demo-worker-template' })!;
    await tb.env.mgmt.create({ ...t, metadata: { name: 'demo-worker-template-v2', namespace: 'cpaas-system' } } as KubeObject);
    await tb.env.mgmt.patch({ kind: 'MachineDeployment', namespace: 'cpaas-system', name: 'demo-md-0' }, 'merge', { spec: { template: { spec: { infrastructureRef: { name: 'demo-worker-template-v2' } } } } });
    await mon.check();
    // Someone deletes two more machines by hand during the rollout (maxUnavailable is 1).
    for (const m of tb.env.mgmt.listSync<KubeObject>('Machine').slice(0, 2)) await tb.env.mgmt.delete({ kind: 'Machine', namespace: 'cpaas-system', name: m.metadata.name });
    let v: Awaited<ReturnType<InvariantMonitor['check']>> = [];
    await tb.sim.runUntil(async () => (v = [...v, ...(await mon.check())]).some((x) => x.rule === 'MD-1'), 3_600_000);
    // Either bound names it first: the count of available machines, or the deletion of available ones that broke it.
    expect(v.find((x) => x.rule === 'MD-1')?.message).toMatch(/available machines during a rollout, below replicas 3 - maxUnavailable 1|deleted during a rollout, leaving \d available .* below replicas 3 - maxUnavailable 1/);
    await tb.close();
  });

  it('BOOT-3 at rest: a node whose kubelet certificate was replaced by one from another CA is reported', async () => {
    const tb = await runningCluster();
    const mon = new InvariantMonitor(tb.world, () => tb.events.all());
    await tb.sim.runUntil(() => tb.env.mgmt.listSync<KubeObject & { status?: { phase?: string } }>('Machine').every((m) => m.status?.phase === 'Running'), 3_600_000);
    expect(await mon.checkAtRest()).toEqual([]);
    const rng = new SeededRng(1);
    const otherCa = await generateCA(rng, tb.clock.now(), 'rogue');
    const leaf = await issueCertificate(otherCa, { commonName: 'system:node:demo-worker-2' }, rng, tb.clock.now());
    tb.guests.writeFile('demo-worker-2', '/etc/kubernetes/pki/kubelet.crt', leaf.certPem);
    tb.guests.writeFile('demo-worker-2', '/etc/kubernetes/pki/kubelet.key', leaf.keyPem);
    const v = await mon.checkAtRest();
    expect(v.map((x) => `${x.rule}: ${x.message}`)).toEqual(['BOOT-3: kubelet certificate of node demo-worker-2 is not valid: certificate is not signed by the cluster CA']);
    await tb.close();
  });
});
