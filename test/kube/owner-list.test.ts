/**
 * listOwned through the embedded store's owner index
 * (EmbeddedStore.listOwnedSharedSync, the index garbage collection keeps):
 * after any sequence of creates, owner edits and deletions, it lists exactly
 * what a walk over the namespace finds (the objects with an ownerReference to
 * the uid), in the same order, and the fallback for backends without an
 * index (the namespace's list, filtered) agrees.
 */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { SeededRng } from '../../src/core/rng.js';
import { EmbeddedStore, type KubeObject } from '../../src/core/kube/index.js';
import { listOwned, type KubeClient } from '../../src/core/kube/client.js';

const KIND = 'MachineSet';
const NAMESPACES = ['ns', 'other'];

function names(os: readonly Readonly<KubeObject>[]): string[] {
  return os.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
}

describe('listOwned (the store owner index)', () => {
  it('lists what a walk over the namespace finds, through creates, owner edits and deletions; the fallback agrees', async () => {
    const s = new EmbeddedStore({ clock: new VirtualClock(0), rng: new SeededRng(1), clusterName: 'test' });
    const rng = new SeededRng(7);
    // Owners: MachineDeployments in both namespaces.
    const owners: { uid: string; name: string; namespace: string }[] = [];
    for (let i = 0; i < 6; i++) {
      const namespace = NAMESPACES[i % 2]!;
      const md = await s.create<KubeObject>({ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineDeployment', metadata: { name: `md${i}`, namespace }, spec: { clusterName: 'c', template: { spec: { clusterName: 'c', bootstrap: {}, infrastructureRef: { kind: 'HCSMachineTemplate', name: 't' } } } } });
      owners.push({ uid: md.metadata.uid!, name: md.metadata.name, namespace });
    }
    const refsFor = (namespace: string) =>
      owners
        .filter((o) => o.namespace === namespace && rng.int(3) === 0)
        .map((o, i) => ({ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineDeployment', name: o.name, uid: o.uid, ...(i === 0 ? { controller: true } : {}) }));
    // Without the index: the same client less listOwnedSharedSync.
    const plain = new Proxy(s, { get: (t, p) => (p === 'listOwnedSharedSync' ? undefined : Reflect.get(t, p, t)) }) as unknown as KubeClient;
    let created = 0;
    let nonEmpty = 0;
    for (let step = 0; step < 400; step++) {
      const all = s.listSharedSync<KubeObject>(KIND);
      const op = all.length < 20 ? 0 : rng.int(4);
      const pick = all[rng.int(Math.max(1, all.length))];
      const ref = pick ? { kind: KIND, namespace: pick.metadata.namespace!, name: pick.metadata.name } : undefined;
      if (op === 0 || !ref) {
        const namespace = NAMESPACES[rng.int(2)]!;
        await s.create({ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: KIND, metadata: { name: `ms${created++}`, namespace, ownerReferences: refsFor(namespace) }, spec: { clusterName: 'c', selector: {}, template: { spec: { clusterName: 'c', bootstrap: {}, infrastructureRef: { kind: 'HCSMachineTemplate', name: 't' } } } } });
      } else if (op === 1) {
        const cur = s.getSync<KubeObject>(ref)!;
        await s.update({ ...cur, metadata: { ...cur.metadata, ownerReferences: refsFor(ref.namespace) } });
      } else if (op === 2) {
        await s.patch(ref, 'merge', { metadata: { ownerReferences: null } });
      } else {
        await s.delete(ref);
      }
      for (const o of owners) {
        for (const namespace of NAMESPACES) {
          const walk = s.listSharedSync<KubeObject>(KIND, { namespace }).filter((x) => x.metadata.ownerReferences?.some((r) => r.uid === o.uid));
          const indexed = await listOwned<KubeObject>(s, KIND, namespace, o.uid);
          expect(names(indexed), `step ${step}: ${o.name} in ${namespace}`).toEqual(names(walk));
          expect(names(await listOwned<KubeObject>(plain, KIND, namespace, o.uid)), `step ${step}: fallback`).toEqual(names(walk));
          if (walk.length > 1) nonEmpty++;
        }
      }
    }
    expect(nonEmpty).toBeGreaterThan(500);
  }, 60_000);
});
