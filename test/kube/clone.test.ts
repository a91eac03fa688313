/**
 * The store's copies (src/core/kube/patch.ts jsonClone): the same value as
 * structuredClone for JSON data, and a caller that mutates what a read, a
 * write or a watch event handed it never changes what the store holds.
 */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { SeededRng } from '../../src/core/rng.js';
import { EmbeddedStore, type KubeObject, type WatchEvent } from '../../src/core/kube/index.js';
import { jsonClone } from '../../src/core/kube/patch.js';

const sample = (): Record<string, unknown> => ({
  a: 1,
  s: 'x',
  n: null,
  u: undefined,
  t: true,
  nested: { list: [1, { deep: ['a', ['b', { c: 0 }]] }, null], empty: {}, none: [] },
  '10': 'integer-like key first',
  z: -0,
});

describe('jsonClone', () => {
  it('gives what structuredClone gives, keys in the same order, sharing nothing', () => {
    const v = sample();
    const c = jsonClone(v);
    expect(c).toStrictEqual(structuredClone(v));
    expect(Object.keys(c)).toEqual(Object.keys(v));
    expect('u' in c).toBe(true);
    expect(Object.is(c.z, -0)).toBe(true);
    const nested = c.nested as { list: unknown[] };
    expect(nested).not.toBe(v.nested);
    expect(nested.list).not.toBe((v.nested as { list: unknown[] }).list);
    (nested.list[1] as { deep: unknown[] }).deep.push('changed');
    expect(v).toStrictEqual(sample());
  });

  it('copies frozen input into unfrozen output, and non-plain values (a Date) as structuredClone does', () => {
    const frozen = Object.freeze({ a: Object.freeze([Object.freeze({ b: 1 })]) });
    const c = jsonClone(frozen) as { a: { b: number }[] };
    expect(Object.isFrozen(c) || Object.isFrozen(c.a) || Object.isFrozen(c.a[0])).toBe(false);
    c.a[0]!.b = 2;
    expect(frozen.a[0]!.b).toBe(1);
    const d = new Date(5);
    const withDate = jsonClone({ when: d }) as { when: Date };
    expect(withDate.when).toBeInstanceOf(Date);
    expect(withDate.when).not.toBe(d);
    expect(withDate.when.getTime()).toBe(5);
    const sparse = jsonClone([1, , 3]); // eslint-disable-line no-sparse-arrays
    expect(sparse).toEqual(structuredClone([1, , 3])); // eslint-disable-line no-sparse-arrays
  });
});

describe('EmbeddedStore copies', () => {
  const cm = (): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns', labels: { a: '1' } }, data: { k: 'v' } } as KubeObject);
  const ref = { kind: 'ConfigMap', namespace: 'ns', name: 'c' };

  it('reads, writes and watch events hand out copies: mutating them leaves the stored object as it was', async () => {
    const s = new EmbeddedStore({ clock: new VirtualClock(0), rng: new SeededRng(1), clusterName: 'test' });
    const seen: WatchEvent[] = [];
    s.watch('ConfigMap', (e) => seen.push(e));
    const created = await s.create(cm());
    const stored = (): unknown => structuredClone(s.getSharedSync(ref));
    const before = stored();
    const mutate = (o: KubeObject): void => {
      o.metadata.labels!.a = 'mutated';
      (o as unknown as { data: Record<string, string> }).data.k = 'mutated';
    };
    mutate(created);
    mutate((await s.get<KubeObject>(ref))!);
    mutate((await s.list<KubeObject>('ConfigMap'))[0]!);
    mutate(seen[0]!.object);
    expect(stored()).toStrictEqual(before);
    const fresh = (await s.get<KubeObject>(ref))!;
    fresh.metadata.labels = { a: '2' };
    const updated = await s.update(fresh);
    const after = stored();
    mutate(updated);
    mutate(seen[1]!.object);
    expect(stored()).toStrictEqual(after);
    expect((s.getSharedSync(ref) as KubeObject).metadata.labels).toEqual({ a: '2' });
    expect(Object.isFrozen(s.getSharedSync(ref))).toBe(true);
  });
});
