/**
 * The MachineSet status counts kept from the Machine and Node watches
 * (MachineSetStatusCounter) against the full walk (walkStatusCounts over the
 * list the controller used to take), over randomized sequences of Machine,
 * Node and MachineSet changes on embedded stores.
 */
import { describe, expect, it } from 'vitest';
import { CAPI_VERSION, LABEL_CLUSTER_NAME } from '../../src/product/api/capi.js';
import type { Machine, MachineSet } from '../../src/product/api/capi.js';
import type { Node } from '../../src/product/api/core.js';
import { MachineOwnerIndex, MachineSetStatusCounter, walkStatusCounts } from '../../src/world/capi/machineset.js';
import { VirtualClock } from '../../src/core/clock.js';
import { SeededRng } from '../../src/core/rng.js';
import { EmbeddedStore } from '../../src/core/kube/index.js';
import { controllerOf, ownerRef } from '../../src/core/kube/types.js';

const NS = 'ns';
const CLUSTER = 'c';

async function run(seed: number, steps: number): Promise<number> {
  const clock = new VirtualClock(Date.UTC(2026, 0, 1));
  const rng = new SeededRng(seed);
  const mgmt = new EmbeddedStore({ clock, rng: new SeededRng(seed + 1), clusterName: 'mgmt' });
  const wl = new EmbeddedStore({ clock, rng: new SeededRng(seed + 2), clusterName: 'workload' });
  const pick = <T>(xs: readonly T[]): T => xs[rng.int(xs.length)]!;

  const sets: MachineSet[] = [];
  for (const name of ['ms-a', 'ms-b']) {
    sets.push(
      await mgmt.create<MachineSet>({
        apiVersion: CAPI_VERSION,
        kind: 'MachineSet',
        metadata: { name, namespace: NS },
        spec: {
          clusterName: CLUSTER,
          replicas: 3,
          selector: { matchLabels: { [LABEL_CLUSTER_NAME]: CLUSTER, pool: 'p' } },
          template: { metadata: { labels: { [LABEL_CLUSTER_NAME]: CLUSTER, pool: 'p', tier: 'x' } }, spec: { clusterName: CLUSTER, bootstrap: {}, infrastructureRef: { name: 'i' } } },
        },
      }),
    );
  }
  // Some Machines exist before the index is built (the snapshot), the rest come through the watch.
  const machineNames = Array.from({ length: 12 }, (_, i) => `m-${i}`);
  const nodeNames = Array.from({ length: 8 }, (_, i) => `n-${i}`);
  const randomLabels = (): Record<string, string> => {
    const l: Record<string, string> = {};
    if (rng.int(5) > 0) l[LABEL_CLUSTER_NAME] = CLUSTER;
    if (rng.int(4) > 0) l.pool = pick(['p', 'q']);
    if (rng.int(2) > 0) l.tier = pick(['x', 'y']);
    return l;
  };
  const createMachine = async (name: string): Promise<void> => {
    const owner = pick([...sets, undefined]);
    await mgmt.create<Machine>({
      apiVersion: CAPI_VERSION,
      kind: 'Machine',
      metadata: { name, namespace: NS, labels: randomLabels(), finalizers: ['machine.cluster.x-k8s.io'], ...(owner ? { ownerReferences: [ownerRef(owner)] } : {}) },
      spec: { clusterName: CLUSTER, bootstrap: {}, infrastructureRef: { name } },
    });
  };
  for (const n of machineNames.slice(0, 4)) await createMachine(n);

  const index = new MachineOwnerIndex(mgmt.listSharedSync<Machine>('Machine'));
  const counter = new MachineSetStatusCounter(index);
  mgmt.watch<Machine>('Machine', (e) => {
    index.apply(e.type, e.object);
    counter.onMachine(e.object);
  }, { shared: true });
  mgmt.watch<MachineSet>('MachineSet', (e) => {
    if (e.type === 'DELETED') counter.forget(e.object.metadata.uid!);
  }, { shared: true });
  wl.watch<Node>('Node', (e) => counter.onNode(`${NS}/${CLUSTER}`, e.object.metadata.name), { shared: true });

  const compare = async (ms: Readonly<MachineSet>): Promise<void> => {
    const selector = ms.spec.selector.matchLabels ?? {};
    const listed = mgmt.listSharedSync<Machine>('Machine', { namespace: NS, labelSelector: selector }).filter((m) => controllerOf(m)?.uid === ms.metadata.uid);
    const walked = await walkStatusCounts(listed, ms.spec.template.metadata?.labels ?? {}, 0, clock.now(), (_m, name) => wl.getSharedSync<Node>({ kind: 'Node', name }));
    expect(counter.counts(ms, `${NS}/${CLUSTER}`, wl)).toEqual(walked);
  };

  let compared = 0;
  for (let step = 0; step < steps; step++) {
    const name = pick(machineNames);
    const m = mgmt.getSync<Machine>({ kind: 'Machine', namespace: NS, name });
    const op = rng.int(11);
    if (!m && op < 8) await createMachine(name);
    else if (m && op === 0) await mgmt.update({ ...m, metadata: { ...m.metadata, labels: randomLabels() } });
    else if (m && op === 1) {
      const owner = pick([...sets, undefined]);
      await mgmt.update({ ...m, metadata: { ...m.metadata, ownerReferences: owner ? [ownerRef(owner)] : [] } });
    } else if (m && (op === 2 || op === 3)) {
      const node = rng.int(4) === 0 ? undefined : pick(nodeNames);
      await mgmt.updateStatus({ ...m, status: { ...(m.status ?? {}), nodeRef: node ? { kind: 'Node', name: node } : undefined } });
    } else if (m && op === 4) await mgmt.delete({ kind: 'Machine', namespace: NS, name });
    else if (m && op === 5 && m.metadata.deletionTimestamp) await mgmt.update({ ...m, metadata: { ...m.metadata, finalizers: [] } });
    else if (op === 6 || op === 7 || op === 8) {
      const nn = pick(nodeNames);
      const node = wl.getSync<Node>({ kind: 'Node', name: nn });
      const ready = rng.int(3) > 0 ? 'True' : 'False';
      if (!node) await wl.create<Node>({ apiVersion: 'v1', kind: 'Node', metadata: { name: nn }, spec: {}, status: { conditions: [{ type: 'Ready', status: ready }] } });
      else if (rng.int(4) === 0) await wl.delete({ kind: 'Node', name: nn });
      else await wl.updateStatus<Node>({ ...node, status: { conditions: [{ type: 'Ready', status: ready }] } });
    } else if (op === 9) {
      // The template's labels or the selector change: the counts are rebuilt for the new ones.
      const i = rng.int(sets.length);
      const ms = mgmt.getSync<MachineSet>({ kind: 'MachineSet', namespace: NS, name: sets[i]!.metadata.name })!;
      const tpl = { ...(ms.spec.template.metadata?.labels ?? {}), tier: pick(['x', 'y']) };
      const sel = { [LABEL_CLUSTER_NAME]: CLUSTER, pool: pick(['p', 'q']) };
      sets[i] = await mgmt.update({ ...ms, spec: { ...ms.spec, selector: rng.int(2) ? { matchLabels: sel } : ms.spec.selector, template: { ...ms.spec.template, metadata: { labels: tpl } } } });
    }
    clock.advanceBy(1000);
    // Compare only now and then, so that changes pile up between two counts, as between two reconciles.
    if (rng.int(3) === 0) {
      await compare(pick(sets));
      compared++;
    }
  }
  for (const ms of sets) await compare(ms);
  return compared;
}

describe('MachineSet status counts kept from the watches', () => {
  it('equal the full walk over randomized Machine, Node and MachineSet changes', async () => {
    for (let seed = 1; seed <= 20; seed++) expect(await run(seed, 400)).toBeGreaterThan(50);
  });
});
