import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { SeededRng } from '../../src/core/rng.js';
import { EmbeddedStore, KubeApiError, applyJsonPatch, applyMergePatch, ownerRef, type KubeObject, type WatchEvent } from '../../src/core/kube/index.js';

function store(): EmbeddedStore {
  return new EmbeddedStore({ clock: new VirtualClock(0), rng: new SeededRng(1), clusterName: 'test' });
}

const md = (name: string, replicas = 1): KubeObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta1',
  kind: 'MachineDeployment',
  metadata: { name, namespace: 'ns' },
  spec: { clusterName: 'c', replicas, template: { spec: {} } },
});

describe('EmbeddedStore', () => {
  it('sets uid, creationTimestamp, generation and resourceVersion; rejects duplicates', async () => {
    const s = store();
    const o = await s.create(md('a'));
    expect(o.metadata.uid).toMatch(/-/);
    expect(o.metadata.generation).toBe(1);
    expect(o.metadata.creationTimestamp).toBe('1970-01-01T00:00:00Z');
    await expect(s.create(md('a'))).rejects.toMatchObject({ reason: 'AlreadyExists', code: 409 });
  });

  it('bumps generation on spec changes only, and refuses stale writes with Conflict', async () => {
    const s = store();
    const o = await s.create(md('a'));
    const st = await s.updateStatus({ ...o, status: { replicas: 1 } });
    expect(st.metadata.generation).toBe(1);
    expect(Number(st.metadata.resourceVersion)).toBeGreaterThan(Number(o.metadata.resourceVersion));
    await expect(s.update({ ...o, spec: { ...(o.spec as object), replicas: 5 } })).rejects.toMatchObject({ reason: 'Conflict' });
    const up = await s.update({ ...st, spec: { ...(st.spec as object), replicas: 5 } });
    expect(up.metadata.generation).toBe(2);
    expect(up.status).toEqual({ replicas: 1 }); // update ignores status (status subresource)
    const same = await s.update(up);
    expect(same.metadata.resourceVersion).toBe(up.metadata.resourceVersion); // no-op write
  });

  it('honours finalizers: delete marks deletionTimestamp; removing the last finalizer deletes', async () => {
    const s = store();
    const o = await s.create({ ...md('a'), metadata: { ...md('a').metadata, finalizers: ['x'] } });
    const seen: string[] = [];
    s.watch('MachineDeployment', (e: WatchEvent) => seen.push(e.type));
    await s.delete({ kind: 'MachineDeployment', namespace: 'ns', name: 'a' });
    const marked = await s.get({ kind: 'MachineDeployment', namespace: 'ns', name: 'a' });
    expect(marked?.metadata.deletionTimestamp).toBeDefined();
    await expect(s.update({ ...marked!, metadata: { ...marked!.metadata, finalizers: ['x', 'y'] } })).rejects.toMatchObject({ reason: 'Forbidden' });
    await s.update({ ...marked!, metadata: { ...marked!.metadata, finalizers: [] } });
    expect(await s.get({ kind: 'MachineDeployment', namespace: 'ns', name: 'a' })).toBeUndefined();
    expect(seen).toEqual(['MODIFIED', 'DELETED']);
    expect(o.metadata.finalizers).toEqual(['x']);
  });

  it('garbage-collects dependents whose owners are all gone', async () => {
    const s = store();
    const owner = await s.create(md('owner'));
    await s.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'dep', namespace: 'ns', ownerReferences: [ownerRef(owner)] } });
    await s.delete({ kind: 'MachineDeployment', namespace: 'ns', name: 'owner' });
    expect(await s.get({ kind: 'Secret', namespace: 'ns', name: 'dep' })).toBeUndefined();
  });

  it('lists in key byte order (as etcd) while objects come and go between lists', async () => {
    const s = store();
    const rng = new SeededRng(7);
    const names = new Set<string>();
    for (let i = 0; i < 300; i++) {
      // Interleave lists (which build the order) with creates and deletes (which keep it up to date).
      if (i % 7 === 0) await s.list('MachineDeployment');
      const name = `md-${rng.string(3)}${i % 3 === 0 ? '.x' : ''}`;
      if (names.has(name) || (names.size > 20 && rng.int(3) === 0)) {
        const victim = [...names][rng.int(names.size)]!;
        await s.delete({ kind: 'MachineDeployment', namespace: 'ns', name: victim });
        names.delete(victim);
        continue;
      }
      await s.create(md(name));
      names.add(name);
    }
    const listed = (await s.list('MachineDeployment')).map((o) => o.metadata.name);
    expect(listed).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(listed.length).toBeGreaterThan(20);
  });

  it('filters lists by namespace and labels; validators reject and change nothing', async () => {
    const s = store();
    s.addValidator('MachineDeployment', (_op, o) => ((o.spec as { replicas: number }).replicas < 0 ? [{ field: 'spec.replicas', message: 'must be >= 0', rule: 'MD-1' }] : []));
    await s.create({ ...md('a'), metadata: { ...md('a').metadata, labels: { x: '1' } } });
    await s.create(md('b'));
    expect((await s.list('MachineDeployment', { labelSelector: { x: '1' } })).map((o) => o.metadata.name)).toEqual(['a']);
    expect(await s.list('MachineDeployment', { namespace: 'other' })).toEqual([]);
    const err = await s.create(md('c', -1)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).message).toBe('MachineDeployment "c" is invalid: spec.replicas: MD-1: must be >= 0');
    expect(await s.get({ kind: 'MachineDeployment', namespace: 'ns', name: 'c' })).toBeUndefined();
  });
});

describe('patches', () => {
  it('applies RFC 7386 merge patches', () => {
    expect(applyMergePatch({ a: 1, b: { c: 2, d: 3 } }, { b: { c: null, e: 4 }, f: [1] })).toEqual({ a: 1, b: { d: 3, e: 4 }, f: [1] });
  });
  it('applies RFC 6902 json patches and reports missing paths', () => {
    const doc = { spec: { replicas: 3, list: [1, 2] } };
    expect(applyJsonPatch(doc, [{ op: 'replace', path: '/spec/replicas', value: 4 }, { op: 'add', path: '/spec/list/-', value: 3 }])).toEqual({ spec: { replicas: 4, list: [1, 2, 3] } });
    expect(doc.spec.replicas).toBe(3);
    expect(() => applyJsonPatch(doc, [{ op: 'replace', path: '/spec/nope', value: 1 }])).toThrow(/missing path/);
  });
});
