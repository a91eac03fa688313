/**
 * The pieces that let the simulation run on a real kube-apiserver:
 * the watch barrier (ClientNodeKube.settled / sync), timestamps on the
 * virtual clock, the testbed's garbage collector and the cluster reset.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rfc3339, VirtualClock } from '../../src/core/clock.js';
import { ClientNodeKube } from '../../src/core/kube/client-node.js';
import { ownerRef, type KubeObject, type WatchEvent } from '../../src/core/kube/types.js';
import { Manager } from '../../src/core/runtime/manager.js';
import { setupGarbageCollector } from '../../src/core/runtime/garbage-collector.js';
import { Simulation } from '../../src/core/runtime/simulation.js';
import { resetCluster } from '../../src/harness/realcluster/remote.js';
import { realCluster, skipReason, suiteSuffix } from './env.js';

const NS = 'remote';
const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';

const cm = (name: string, data: Record<string, string> = {}, extra: Partial<KubeObject['metadata']> = {}): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, ...extra }, data }) as KubeObject;

describe.skipIf(!!skipReason)(`a simulation on a real kube-apiserver${suiteSuffix}`, () => {
  let kubeconfig: string;
  const clients: ClientNodeKube[] = [];
  const client = (clock?: VirtualClock): ClientNodeKube => {
    const c = ClientNodeKube.fromKubeconfig(kubeconfig, undefined, clock ? { clock } : {});
    clients.push(c);
    return c;
  };
  beforeAll(async () => {
    kubeconfig = (await realCluster([NS])).kubeconfigPath;
  }, 120_000);
  afterAll(() => {
    for (const c of clients) c.close();
  });

  it("settled(): once it resolves, every watch handler the client's own writes trigger has run", async () => {
    const c = client();
    const seen: string[] = [];
    c.watch<KubeObject>('ConfigMap', (e) => seen.push(`${e.type} ${e.object.metadata.name}`), { namespace: NS, labelSelector: { barrier: 'yes' } });
    await c.settled();
    for (let i = 0; i < 20; i++) await c.create(cm(`b${i}`, {}, { labels: { barrier: 'yes' } }));
    await c.patch({ kind: 'ConfigMap', namespace: NS, name: 'b0' }, 'merge', { metadata: { labels: { barrier: 'no' } } });
    await c.delete({ kind: 'ConfigMap', namespace: NS, name: 'b1' });
    await c.settled();
    // No waiting beyond the barrier: the events are all there.
    expect(seen.filter((s) => s.startsWith('ADDED')).length).toBe(20);
    // Leaving the selector is a DELETED for a selected watch (as the apiserver reports it).
    expect(seen).toContain('DELETED b0');
    expect(seen).toContain('DELETED b1');
  });

  it('a Simulation with the barrier runs the work that watch events enqueue before it calls an instant quiescent', async () => {
    const c = client();
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const manager = new Manager({ clock });
    const sim = new Simulation(clock, manager, () => c.settled());
    const reconciled: string[] = [];
    // A chain: each reconcile writes the next ConfigMap; only the watch event drives the next step.
    manager.register({
      name: 'chain',
      async reconcile(key) {
        reconciled.push(key);
        const n = Number(key.split('-')[1]);
        if (n < 5) await c.create(cm(`chain-${n + 1}`));
      },
    });
    c.watch<KubeObject>('ConfigMap', (e) => e.type === 'ADDED' && e.object.metadata.name.startsWith('chain-') && manager.enqueue('chain', e.object.metadata.name), { namespace: NS });
    await c.settled();
    await c.create(cm('chain-0'));
    await sim.settle();
    expect(reconciled).toEqual(['chain-0', 'chain-1', 'chain-2', 'chain-3', 'chain-4', 'chain-5']);
  });

  it('sync(): catches up with writes made outside the client (the real kubectl)', async () => {
    const c = client();
    const seen: string[] = [];
    c.watch<KubeObject>('ConfigMap', (e: WatchEvent<KubeObject>) => seen.push(`${e.type} ${e.object.metadata.name}`), { namespace: NS });
    await c.settled();
    const r = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, '-n', NS, 'create', 'configmap', 'from-kubectl', '--from-literal=a=b'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    await c.sync();
    expect(seen).toContain('ADDED from-kubectl');
  });

  it('creationTimestamp and deletionTimestamp are on the virtual clock', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const c = client(clock);
    const a = await c.create(cm('t-a', {}, { finalizers: ['hcs.io/test'] }));
    expect(a.metadata.creationTimestamp).toBe(rfc3339(Date.UTC(2026, 0, 1)));
    clock.advanceBy(3_600_000);
    const b = await c.create(cm('t-b'));
    expect(b.metadata.creationTimestamp).toBe(rfc3339(Date.UTC(2026, 0, 1, 1)));
    expect((await c.get<KubeObject>({ kind: 'ConfigMap', namespace: NS, name: 't-a' }))!.metadata.creationTimestamp).toBe(rfc3339(Date.UTC(2026, 0, 1)));
    clock.advanceBy(60_000);
    await c.delete({ kind: 'ConfigMap', namespace: NS, name: 't-a' });
    clock.advanceBy(60_000);
    const marked = (await c.get<KubeObject>({ kind: 'ConfigMap', namespace: NS, name: 't-a' }))!;
    expect(marked.metadata.deletionTimestamp).toBe(rfc3339(Date.UTC(2026, 0, 1, 1, 1)));
    // Writing the translated values back changes nothing on the server (both fields are read-only).
    await c.update({ ...marked, metadata: { ...marked.metadata, finalizers: [] } });
    await c.settled();
    expect(await c.get({ kind: 'ConfigMap', namespace: NS, name: 't-a' })).toBeUndefined();
  });

  it("the testbed's garbage collector deletes dependents whose every owner is gone, and keeps those with a live owner", async () => {
    const c = client();
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const manager = new Manager({ clock });
    const sim = new Simulation(clock, manager, () => c.settled());
    const stop = setupGarbageCollector({ mgmt: c, manager, kinds: ['ConfigMap'] });
    await c.settled();
    const owner1 = await c.create(cm('owner-1'));
    const owner2 = await c.create(cm('owner-2'));
    await c.create(cm('dep-only', {}, { ownerReferences: [ownerRef(owner1, false)] }));
    await c.create(cm('dep-both', {}, { ownerReferences: [ownerRef(owner1, false), ownerRef(owner2, false)] }));
    const dep = await c.create(cm('dep-only-child', {}, {}));
    await c.update({ ...dep, metadata: { ...dep.metadata, ownerReferences: [ownerRef((await c.get<KubeObject>({ kind: 'ConfigMap', namespace: NS, name: 'dep-only' }))!, false)] } });
    await sim.settle();
    await c.delete({ kind: 'ConfigMap', namespace: NS, name: 'owner-1' });
    await sim.settle();
    const names = (await c.list<KubeObject>('ConfigMap', { namespace: NS })).map((o) => o.metadata.name);
    expect(names).not.toContain('dep-only');
    expect(names).not.toContain('dep-only-child'); // cascades: its owner was collected
    expect(names).toContain('dep-both'); // owner-2 still lives
    stop();
  });

  it('resetCluster empties the testbed kinds (finalizers removed) and leaves the system namespaces alone', async () => {
    const c = client();
    await c.create(cm('stuck', {}, { finalizers: ['hcs.io/never'] }));
    const n = await resetCluster({ kubeconfig });
    expect(n).toBeGreaterThan(0);
    expect(await c.list('ConfigMap', { namespace: NS })).toEqual([]);
  });
});
