/**
 * The dashboard's data (issue 34), without a browser: the patches the page
 * receives (only what changed), the owner tree with its counts and progress
 * lines, and a surge machine waiting for a pool entry in its own lane with
 * the advice right for a pool with persistent disks (maxSurge 0, MD-3).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { Machine } from '../../src/product/api/capi.js';
import { applyPatch, diffView, ViewText } from '../../src/harness/dashboard/diff.js';
import { computeView, type DashboardView, type ViewSources } from '../../src/harness/dashboard/view.js';
import { applyObject, loadManifestPath } from '../../src/harness/manifests/index.js';
import { createTestbed, type Testbed } from '../../src/harness/testbed/index.js';
import { REPO } from '../facade/fixture.js';
import { startSurgeRollout } from './fixtures.js';

const NS = 'cpaas-system';

describe('diffView / applyPatch', () => {
  const v = (items: { id: string; x: number }[], extra: Record<string, unknown> = {}) => ({ time: { now: 1 }, list: items, ...extra });
  const patchOf = (a: Record<string, unknown>, b: Record<string, unknown>) => diffView(ViewText.of(a), ViewText.of(b), b);

  it('nothing changed: an empty patch; one item changed: that item only; removed, added and reordered items; plain values replaced', () => {
    const a = v([{ id: 'a', x: 1 }, { id: 'b', x: 2 }, { id: 'c', x: 3 }]);
    expect(patchOf(a, structuredClone(a))).toEqual({});
    const b = v([{ id: 'a', x: 1 }, { id: 'b', x: 20 }, { id: 'c', x: 3 }]);
    expect(patchOf(a, b)).toEqual({ list: { list: { upsert: [{ id: 'b', x: 20 }] } } });
    const c = v([{ id: 'c', x: 3 }, { id: 'd', x: 4 }, { id: 'a', x: 1 }], { time: { now: 2 } });
    const p = patchOf(a, c);
    expect(p).toEqual({ time: { set: { now: 2 } }, list: { list: { upsert: [{ id: 'd', x: 4 }], remove: ['b'], order: ['c', 'd', 'a'] } } });
    // Kept items in their order: the new one placed by index, no order sent.
    const d = v([{ id: 'a', x: 1 }, { id: 'e', x: 5 }, { id: 'c', x: 3 }]);
    expect(patchOf(a, d)).toEqual({ list: { list: { upsert: [{ id: 'e', x: 5 }], remove: ['b'], at: [['e', 1]] } } });
    expect(applyPatch(a, patchOf(a, d))).toEqual(d);
    expect(applyPatch(a, p)).toEqual(c);
  });

  it('applyPatch(prev, diffView(prev, next)) is next, for random changes (a list that empties and fills again, keys that come and go)', () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    let prev: Record<string, unknown> = v([]);
    for (let i = 0; i < 300; i++) {
      const items = Array.from({ length: rnd(6) }, (_, k) => ({ id: `i${rnd(8)}-${k % 3}`, x: rnd(3) })).filter((x, k, all) => all.findIndex((y) => y.id === x.id) === k);
      const next = v(items, rnd(3) === 0 ? { extra: rnd(4) } : {});
      expect(applyPatch(prev, patchOf(prev, next)), `step ${i}`).toEqual(next);
      prev = next;
    }
  });
});

describe('the view of a served testbed: a surge machine on a full pool with persistent disks (MD-3)', () => {
  let tb: Testbed;
  let src: ViewSources;
  const view = (): DashboardView => computeView(src);
  beforeAll(async () => {
    tb = await createTestbed({ seed: 42, startMs: Date.UTC(2026, 0, 1) });
    for (const m of loadManifestPath(join(REPO, 'scenarios/manifests/worker-cluster'))) await applyObject(tb.env.mgmt, m.obj, m.obj.metadata.namespace);
    const up = () => tb.env.mgmt.listSync<Machine>('Machine').filter((m) => m.status?.phase === 'Running').length === 3;
    expect((await tb.sim.runUntil(up, 3_600_000)).ok).toBe(true);
    src = { mgmt: tb.env.mgmt, cloud: tb.cloud, events: tb.env.events, time: () => ({ now: tb.clock.now(), iso: new Date(tb.clock.now()).toISOString(), paused: true, speed: 0, steps: 0 }), workloads: tb.env.workloads };
  }, 120_000);
  afterAll(async () => tb?.close());

  it('before: the owner tree with its counts, one progress line per rollout, nothing waiting', () => {
    const v = view();
    expect(v.tree.map((n) => `${'  '.repeat(n.depth)}${n.kind} ${n.role ?? ''}`.trimEnd())).toEqual(['Cluster', '  MachineDeployment', '    MachineSet new', '      Machine', '      Machine', '      Machine']);
    expect(v.tree.find((n) => n.kind === 'MachineDeployment')!.counts).toEqual({ desired: 3, current: 3, updated: 3, ready: 3 });
    const m = v.tree.find((n) => n.kind === 'Machine')!.machine!;
    expect(m).toMatchObject({ phase: 'Running', infraReady: true, serverStatus: 'ACTIVE', disks: [{ slot: 0, state: 'in-use' }] });
    expect(m.hostname).toMatch(/^demo-worker-\d$/);
    expect(v.rollouts.map((r) => [r.state, r.text])).toEqual([['done', 'worker rollout demo-md-0: 3/3 updated, 3 ready, 3 current, maxSurge 0, maxUnavailable 1 — up to date: demo-worker-template (v1.31.6)']]);
    expect(v.waiting).toEqual([]);
    expect(v.workloads.map((w) => w.id)).toEqual(['cpaas-system/demo']);
    expect(v.nodes.map((n) => [n.id, n.version, n.ready])).toEqual([1, 2, 3].map((i) => [`cpaas-system/demo/demo-worker-${i}`, 'v1.31.6', true]));
  });

  it('maxSurge 1 on the full pool: the surge machine, with no hostname, is in the waiting lane with the maxSurge 0 advice and its reason; the rollout line says held; the tree marks the machine', async () => {
    await startSurgeRollout(tb.env.mgmt);
    await tb.sim.advance(10 * 60_000);
    const v = view();
    expect(v.waiting).toHaveLength(1);
    const w = v.waiting[0]!;
    expect(w).toMatchObject({ owner: 'MachineDeployment demo-md-0', pool: 'demo-worker-pool', reason: 'NoFreePoolEntry' });
    expect(w.rules).toEqual(expect.arrayContaining(['POOL-2', 'MD-3']));
    expect(w.advice).toMatch(/^Fix: set maxSurge 0 on MachineDeployment demo-md-0: kubectl patch machinedeployment demo-md-0 -n cpaas-system --type merge/);
    expect(w.advice).toMatch(/persistent disks.*\(MD-3\)/);
    expect(w.advice).not.toMatch(/Fix: add an entry/);
    // No hostname, so no row in the hostname view: the lane is the only place it shows.
    expect(v.hosts.some((h) => h.machine === w.name)).toBe(false);
    const node = v.tree.find((n) => n.name === w.name)!;
    expect(node.machine!.hostname).toBe('');
    expect(node.stalls).toEqual(['NoFreePoolEntry']);
    const r = v.rollouts[0]!;
    expect(r.state).toBe('held');
    expect(r.text).toMatch(/^worker rollout demo-md-0: 1\/3 updated, 3 ready, 4 current, maxSurge 1, maxUnavailable 0 — held: a machine waits for a free pool entry/);
    expect(v.tree.filter((n) => n.kind === 'MachineSet').map((n) => [n.role, n.counts])).toEqual([['new', { desired: 1, current: 1, updated: 1, ready: 0 }], ['old', { desired: 3, current: 3, updated: 0, ready: 3 }]]);
    expect(v.whySummary.map((x) => [x.reason, x.count])).toEqual([['NoFreePoolEntry', 1]]);
  });

  it('the patches: nothing changed, nothing sent; a change on one machine sends that machine\'s items, not the view', async () => {
    const a = view();
    const ta = ViewText.of(a as unknown as Record<string, unknown>);
    const b = view();
    const tb2 = ViewText.of(b as unknown as Record<string, unknown>);
    expect(diffView(ta, tb2, b as unknown as Record<string, unknown>)).toEqual({});
    // The fix the lane advises: maxSurge 0; the rollout goes on, one machine at a time.
    await tb.env.mgmt.patch({ kind: 'MachineDeployment', namespace: NS, name: 'demo-md-0' }, 'merge', { spec: { strategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } } } });
    await tb.sim.advance(30_000);
    const c = view();
    const p = diffView(tb2, ViewText.of(c as unknown as Record<string, unknown>), c as unknown as Record<string, unknown>);
    const hosts = p.hosts && 'list' in p.hosts ? (p.hosts.list.upsert ?? []).length : 0;
    expect(hosts).toBeLessThanOrEqual(2);
    expect(JSON.stringify(p).length).toBeLessThan(JSON.stringify(c).length / 2);
  });
});
