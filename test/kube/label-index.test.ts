/**
 * The embedded store's label index (src/core/kube/label-index.ts) only narrows a
 * list: after any sequence of creates, label edits, deletions (with and
 * without finalizers), every label selector lists exactly what a walk over
 * all objects with the same selector finds, in the same order.
 */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { SeededRng } from '../../src/core/rng.js';
import { EmbeddedStore, type KubeObject } from '../../src/core/kube/index.js';
import { LabelIndex } from '../../src/core/kube/label-index.js';
import { matchesLabels, parseLabelSelector } from '../../src/core/kube/selectors.js';

const KIND = 'Machine';
const CLUSTERS = ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7'];

function machine(name: string, labels: Record<string, string>, finalizers?: string[]): KubeObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: KIND,
    metadata: { name, namespace: name.endsWith('7') ? 'other' : 'ns', labels, ...(finalizers ? { finalizers } : {}) },
    spec: { clusterName: labels['cluster'] ?? 'c0', bootstrap: { dataSecretName: 'x' }, infrastructureRef: { kind: 'HCSMachine', name } },
  };
}

const SELECTORS = [
  'cluster=c3',
  'cluster==c5,role',
  'cluster=c1,role=cp',
  'role',
  '!role',
  'cluster in (c2,c6)',
  'cluster in (c2,c6),role notin (cp)',
  'cluster notin (c0),set=s1',
  'cluster!=c4',
  'set=s9',
  'cluster in ()',
  'cluster=c2,set in (s0,s1),role',
];

/** What a list with this selector must return: every object of the kind, in list order, filtered one by one. */
function walk(s: EmbeddedStore, selector: string, namespace?: string): string[] {
  const reqs = parseLabelSelector(selector);
  return s
    .listSharedSync(KIND)
    .filter((o) => (!namespace || o.metadata.namespace === namespace) && matchesLabels(o.metadata.labels, reqs))
    .map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
}

function listed(s: EmbeddedStore, selector: string, namespace?: string): string[] {
  return s.listSharedSync(KIND, { labelSelector: selector, ...(namespace ? { namespace } : {}) }).map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
}

describe('EmbeddedStore label index', () => {
  it('lists by label selector exactly what a walk over every object finds, through creates, label edits and deletions', async () => {
    const s = new EmbeddedStore({ clock: new VirtualClock(0), rng: new SeededRng(1), clusterName: 'test' });
    const rng = new SeededRng(42);
    const labelsFor = (): Record<string, string> => {
      const l: Record<string, string> = { cluster: CLUSTERS[rng.int(CLUSTERS.length)]!, set: `s${rng.int(3)}` };
      if (rng.int(4) === 0) l['role'] = rng.int(2) === 0 ? 'cp' : 'worker';
      return l;
    };
    const live = new Map<string, { namespace: string; name: string }>();
    let created = 0;
    let narrowed = 0;
    for (let step = 0; step < 600; step++) {
      const names = [...live.keys()].sort();
      const op = names.length < 40 ? 0 : rng.int(6);
      const pick = names[rng.int(Math.max(1, names.length))];
      const ref = pick ? { kind: KIND, ...live.get(pick)! } : undefined;
      if (op === 0 || !ref) {
        const name = `m${created++}`;
        const o = await s.create(machine(name, labelsFor(), rng.int(3) === 0 ? ['keep'] : undefined));
        live.set(name, { namespace: o.metadata.namespace!, name });
      } else if (op === 1) {
        await s.patch(ref, 'merge', { metadata: { labels: labelsFor() } }); // merged key by key
      } else if (op === 2) {
        await s.patch(ref, 'merge', { metadata: { labels: { role: null, set: `s${rng.int(3)}` } } });
      } else if (op === 3) {
        const cur = s.getSync<KubeObject>(ref)!;
        await s.update({ ...cur, metadata: { ...cur.metadata, labels: labelsFor() } });
      } else if (op === 4) {
        await s.delete(ref); // marks it when it has a finalizer
        if (!s.getSharedSync(ref)) live.delete(ref.name);
      } else {
        const cur = s.getSync<KubeObject>(ref)!;
        await s.update({ ...cur, metadata: { ...cur.metadata, finalizers: [] } }); // a marked object goes now
        if (!s.getSharedSync(ref)) live.delete(ref.name);
      }
      for (const sel of SELECTORS) {
        expect(listed(s, sel), `step ${step}: ${sel}`).toEqual(walk(s, sel));
        expect(listed(s, sel, 'other'), `step ${step}: ${sel} in namespace other`).toEqual(walk(s, sel, 'other'));
      }
      if (listed(s, 'cluster=c3').length * 4 < s.count(KIND)) narrowed++;
    }
    // The narrowed path (few candidates against the kind's size) was taken, not only the full walk.
    expect(narrowed).toBeGreaterThan(100);
  }, 60_000);

  it('candidates: the smallest narrowing requirement; none for !=, notin and !', () => {
    const ix = new LabelIndex();
    ix.update('K', 'a', undefined, { x: '1', y: '1' });
    ix.update('K', 'b', undefined, { x: '1' });
    ix.update('K', 'c', undefined, { x: '2', y: '2' });
    expect([...ix.candidates('K', parseLabelSelector('x=1'))!].sort()).toEqual(['a', 'b']);
    // Two requirements of the same size: the first one's set.
    expect([...ix.candidates('K', parseLabelSelector('x=1,y'))!].sort()).toEqual(['a', 'b']);
    expect([...ix.candidates('K', parseLabelSelector('y=2,x'))!]).toEqual(['c']);
    expect([...ix.candidates('K', parseLabelSelector('x in (1,2)'))!].sort()).toEqual(['a', 'b', 'c']);
    expect(ix.candidates('K', parseLabelSelector('x!=1,y notin (1),!z'))).toBeUndefined();
    expect(ix.candidates('K', parseLabelSelector('z=1'))!.size).toBe(0);
    // A value change moves the object between values; a removed key drops it from the key's set.
    ix.update('K', 'a', { x: '1', y: '1' }, { x: '2' });
    expect([...ix.candidates('K', parseLabelSelector('x=2'))!].sort()).toEqual(['a', 'c']);
    expect([...ix.candidates('K', parseLabelSelector('y'))!]).toEqual(['c']);
    ix.update('K', 'c', { x: '2', y: '2' }, undefined);
    expect(ix.candidates('K', parseLabelSelector('y'))!.size).toBe(0);
  });
});
