/**
 * POOL-4 bookkeeping of bindEntry on its own: first free entry in spec order,
 * an entry held by a machine that no longer exists counts as free (and such
 * stale bindings are cleared on the way), no entry for a second live machine.
 * Run on the embedded store (machine names kept from its watch) and on a
 * client without synchronous reads (names from a list per binding), which
 * must agree.
 */
import { describe, expect, it } from 'vitest';
import type { HCSMachineConfigPool } from '../../src/product/api/hcs.js';
import { VirtualClock } from '../../src/core/clock.js';
import { SeededRng } from '../../src/core/rng.js';
import { EmbeddedStore, type KubeClient } from '../../src/core/kube/index.js';
import { bindEntry } from '../../src/product/provider/index.js';

const NS = 'ns';
const REF = { kind: 'HCSMachineConfigPool', namespace: NS, name: 'pool' };

/** Only the KubeClient methods: no getSharedSync/listSharedSync, as a remote cluster's client. */
function plainClient(store: EmbeddedStore): KubeClient {
  return {
    get: (r) => store.get(r),
    list: (k, o) => store.list(k, o),
    create: (o, w) => store.create(o, w),
    update: (o, w) => store.update(o, w),
    updateStatus: (o, w) => store.updateStatus(o, w),
    patch: (r, t, p, o) => store.patch(r, t, p, o),
    delete: (r, o) => store.delete(r, o),
    watch: (k, h, o) => store.watch(k, h, o),
  };
}

async function setup(): Promise<EmbeddedStore> {
  const store = new EmbeddedStore({ clock: new VirtualClock(0), rng: new SeededRng(1), clusterName: 'mgmt' });
  await store.create({
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
    kind: 'HCSMachineConfigPool',
    metadata: { name: 'pool', namespace: NS },
    spec: { configs: ['h1', 'h2', 'h3'].map((hostname, i) => ({ hostname, networks: [{ subnetName: 's', ipAddress: `10.0.0.${i + 10}` }] })) },
  });
  return store;
}

const machine = (store: EmbeddedStore, name: string): Promise<unknown> =>
  store.create({ apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'HCSMachine', metadata: { name, namespace: NS }, spec: {} });

async function holders(store: EmbeddedStore): Promise<Record<string, string | undefined>> {
  const pool = await store.get<HCSMachineConfigPool>(REF);
  return Object.fromEntries((pool?.status?.entries ?? []).map((e) => [e.hostname, e.machine]));
}

describe.each([
  ['embedded store (names kept from the watch)', (s: EmbeddedStore): KubeClient => s],
  ['client without synchronous reads (names listed per binding)', plainClient],
])('bindEntry on %s (POOL-4)', (_label, clientOf) => {
  it('binds the first free entry in spec order, keeps a held entry, and refuses a fourth machine', async () => {
    const store = await setup();
    const client = clientOf(store);
    for (const m of ['m1', 'm2', 'm3']) await machine(store, m);
    expect(await bindEntry(client, REF, 'm1', undefined, 0)).toMatchObject({ hostname: 'h1' });
    expect(await bindEntry(client, REF, 'm2', undefined, 0)).toMatchObject({ hostname: 'h2' });
    // A bound machine gets its own entry again (the fast path by its recorded hostname, and without it).
    expect(await bindEntry(client, REF, 'm1', 'h1', 0)).toMatchObject({ hostname: 'h1' });
    expect(await bindEntry(client, REF, 'm2', undefined, 0)).toMatchObject({ hostname: 'h2' });
    expect(await bindEntry(client, REF, 'm3', undefined, 0)).toMatchObject({ hostname: 'h3' });
    await machine(store, 'm4');
    expect(await bindEntry(client, REF, 'm4', undefined, 0)).toEqual({ none: true, total: 3, holders: ['h1=m1', 'h2=m2', 'h3=m3'] });
    expect(await holders(store)).toEqual({ h1: 'm1', h2: 'm2', h3: 'm3' });
  });

  it('an entry held by a machine that no longer exists is free: the first such entry is taken and every stale binding is cleared', async () => {
    const store = await setup();
    const client = clientOf(store);
    for (const m of ['m1', 'm2', 'm3']) await machine(store, m);
    for (const m of ['m1', 'm2', 'm3']) await bindEntry(client, REF, m, undefined, 0);
    // m1 and m3 vanish without releasing their entries (e.g. their finalizer was removed by hand).
    await store.delete({ kind: 'HCSMachine', namespace: NS, name: 'm3' });
    await store.delete({ kind: 'HCSMachine', namespace: NS, name: 'm1' });
    // A machine created after the first bindings is known as well.
    await machine(store, 'm5');
    expect(await bindEntry(client, REF, 'm5', undefined, 0)).toMatchObject({ hostname: 'h1' });
    expect(await holders(store)).toEqual({ h1: 'm5', h2: 'm2', h3: undefined });
  });
});
