/**
 * The upstream harness's observed KCP events (src/harness/realcluster/upstream/kcp-events.ts):
 * on `--capi upstream` the model's `kcp.machine-created` / `kcp.scale-down`
 * (src/world/capi/kcp.ts) are recorded from the control plane Machines KCP writes,
 * once per Machine however often the watch repeats them (KCP-1, KCP-2); and the
 * upstream-only kcp.certificates-expiry from the KubeadmConfigs KCP annotates.
 */
import { describe, expect, it } from 'vitest';
import { ANNOTATION_CERTIFICATES_EXPIRY, ANNOTATION_CLONED_FROM_NAME, LABEL_CLUSTER_NAME, LABEL_CONTROL_PLANE } from '../../src/product/api/capi.js';
import type { KubeadmControlPlane, Machine } from '../../src/product/api/capi.js';
import { VirtualClock } from '../../src/core/clock.js';
import { EventLog } from '../../src/core/events.js';
import { SeededRng } from '../../src/core/rng.js';
import { EmbeddedStore } from '../../src/core/kube/embedded-store.js';
import type { KubeObject, WatchEvent } from '../../src/core/kube/types.js';
import { observeCertificateExpiries, observeKcpMachines } from '../../src/harness/realcluster/upstream/kcp-events.js';

const NS = 'cpaas-system';

function setup(): { store: EmbeddedStore; events: EventLog; kcp: KubeadmControlPlane; flush: () => Promise<void>; replay: (e: WatchEvent<Machine>) => void } {
  const clock = new VirtualClock();
  const store = new EmbeddedStore({ clock, rng: new SeededRng(1), clusterName: 'management' });
  const events = new EventLog(clock);
  // The observer's watch handler, kept so that a test can replay what a restarted watch delivers again.
  let handler: ((e: WatchEvent<Machine>) => void) | undefined;
  const mgmt = Object.create(store) as EmbeddedStore;
  mgmt.watch = <T extends KubeObject>(kind: string, h: (e: WatchEvent<T>) => void, opts?: Parameters<EmbeddedStore['watch']>[2]): (() => void) => {
    handler = h as unknown as (e: WatchEvent<Machine>) => void;
    return store.watch<T>(kind, h, opts);
  };
  observeKcpMachines({ mgmt, events });
  const kcp = { apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1', kind: 'KubeadmControlPlane', metadata: { name: 'demo-control-plane', namespace: NS, uid: 'kcp-uid' }, spec: { version: 'v1.31.6' } } as unknown as KubeadmControlPlane;
  const flush = async (): Promise<void> => {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  };
  return { store, events, kcp, flush, replay: (e) => handler!(e) };
}

async function createCpMachine(store: EmbeddedStore, kcp: KubeadmControlPlane, name: string, version: string, template: string): Promise<Machine> {
  const created = await store.create<KubeadmControlPlane>({ ...kcp, metadata: { ...kcp.metadata, uid: undefined } } as KubeadmControlPlane).catch(() => undefined);
  const owner = created ?? (await store.get<KubeadmControlPlane>({ kind: 'KubeadmControlPlane', namespace: NS, name: kcp.metadata.name }))!;
  await store.create({ apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'HCSMachine', metadata: { name, namespace: NS, annotations: { [ANNOTATION_CLONED_FROM_NAME]: template } }, spec: {} } as KubeObject);
  return store.create<Machine>({
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'Machine',
    metadata: { name, namespace: NS, labels: { [LABEL_CLUSTER_NAME]: 'demo', [LABEL_CONTROL_PLANE]: '' }, finalizers: ['machine.cluster.x-k8s.io'], ownerReferences: [{ apiVersion: owner.apiVersion, kind: 'KubeadmControlPlane', name: owner.metadata.name, uid: owner.metadata.uid!, controller: true }] },
    spec: { clusterName: 'demo', version, bootstrap: { configRef: { kind: 'KubeadmConfig', name } }, infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'HCSMachine', name, namespace: NS } },
  } as Machine);
}

describe('upstream harness: KCP events observed from the Machines KCP writes (KCP-1, KCP-2)', () => {
  it('records kcp.machine-created in the model\'s message shape ("initial" for the first of a KCP; version; template the HCSMachine was cloned from) and kcp.scale-down on the deletionTimestamp, once each', async () => {
    const { store, events, kcp, flush } = setup();
    await createCpMachine(store, kcp, 'demo-control-plane-aaaaa', 'v1.31.6', 'demo-cp-template');
    await createCpMachine(store, kcp, 'demo-control-plane-bbbbb', 'v1.31.6', 'demo-cp-template');
    await flush();
    const m = (await store.get<Machine>({ kind: 'Machine', namespace: NS, name: 'demo-control-plane-aaaaa' }))!;
    // Status writes repeat MODIFIED events; the deletion sets a deletionTimestamp (the finalizer holds the object), then it goes.
    await store.update<Machine>({ ...m, metadata: { ...m.metadata, labels: { ...m.metadata.labels, x: '1' } } });
    await store.delete({ kind: 'Machine', namespace: NS, name: 'demo-control-plane-aaaaa' });
    await flush();
    const deleting = (await store.get<Machine>({ kind: 'Machine', namespace: NS, name: 'demo-control-plane-aaaaa' }))!;
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
    await store.update<Machine>({ ...deleting, metadata: { ...deleting.metadata, finalizers: [] } });
    await createCpMachine(store, kcp, 'demo-control-plane-ccccc', 'v1.32.3', 'demo-cp-template-v4.2');
    await flush();
    const kcpEvents = events.all().filter((e) => e.source === 'capi');
    expect(kcpEvents.map((e) => `${e.type}: ${e.message}`)).toEqual([
      'kcp.machine-created: KubeadmControlPlane cpaas-system/demo-control-plane created initial control plane Machine demo-control-plane-aaaaa (v1.31.6, demo-cp-template) [observed]',
      'kcp.machine-created: KubeadmControlPlane cpaas-system/demo-control-plane created control plane Machine demo-control-plane-bbbbb (v1.31.6, demo-cp-template) [observed]',
      'kcp.scale-down: KubeadmControlPlane cpaas-system/demo-control-plane: deleting demo-control-plane-aaaaa [observed: deletionTimestamp set]',
      'kcp.machine-created: KubeadmControlPlane cpaas-system/demo-control-plane created control plane Machine demo-control-plane-ccccc (v1.32.3, demo-cp-template-v4.2) [observed]',
    ]);
    expect(kcpEvents.every((e) => e.data?.observed === true)).toBe(true);
    expect(kcpEvents.find((e) => e.type === 'kcp.scale-down')?.rules).toEqual(['KCP-1', 'KCP-2']);
  });

  it('a watch that restarts (ADDED replayed for every Machine) records nothing twice; Machines of a deleting KubeadmControlPlane and worker Machines are no scale-down', async () => {
    const { store, events, kcp, flush, replay } = setup();
    const m = await createCpMachine(store, kcp, 'demo-control-plane-aaaaa', 'v1.31.6', 'demo-cp-template');
    await store.create({ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Machine', metadata: { name: 'demo-md-0-x', namespace: NS, labels: { [LABEL_CLUSTER_NAME]: 'demo' } }, spec: { clusterName: 'demo', bootstrap: {}, infrastructureRef: { kind: 'HCSMachine', name: 'demo-md-0-x' } } } as Machine);
    await flush();
    // The re-list after a watch restart: ADDED again for every Machine, then MODIFIED.
    replay({ type: 'ADDED', object: m });
    replay({ type: 'MODIFIED', object: m });
    await flush();
    expect(events.all().filter((e) => e.type === 'kcp.machine-created')).toHaveLength(1);
    // The Cluster is deleted: KCP is deleting and deletes its Machines (reconcileDelete): no scale-down.
    const k = (await store.get<KubeadmControlPlane>({ kind: 'KubeadmControlPlane', namespace: NS, name: kcp.metadata.name }))!;
    await store.update<KubeadmControlPlane>({ ...k, metadata: { ...k.metadata, finalizers: ['kubeadm.controlplane.cluster.x-k8s.io'] } });
    await store.delete({ kind: 'KubeadmControlPlane', namespace: NS, name: kcp.metadata.name });
    await store.delete({ kind: 'Machine', namespace: NS, name: m.metadata.name });
    await store.delete({ kind: 'Machine', namespace: NS, name: 'demo-md-0-x' });
    await flush();
    expect(events.all().filter((e) => e.type === 'kcp.scale-down')).toHaveLength(0);
    expect(events.all().filter((e) => e.source === 'capi').map((e) => e.data?.machine)).toEqual(['demo-control-plane-aaaaa']);
  });
});

describe('upstream harness: kcp.certificates-expiry observed from the KubeadmConfigs KCP annotates (reconcileCertificateExpiries)', () => {
  it('records the annotation once per KubeadmConfig with the Machine, its Node and the Node\'s creation in the workload cluster; configs without it or without a Machine owner are skipped', async () => {
    const clock = new VirtualClock(Date.parse('2026-05-01T08:00:00Z'));
    const store = new EmbeddedStore({ clock, rng: new SeededRng(1), clusterName: 'management' });
    const workload = new EmbeddedStore({ clock, rng: new SeededRng(2), clusterName: 'demo' });
    const events = new EventLog(clock);
    await workload.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'demo-cp-1' } });
    const nodeCreated = workload.getSync<KubeObject>({ kind: 'Node', name: 'demo-cp-1' })!.metadata.creationTimestamp!;
    observeCertificateExpiries({ mgmt: store, events, workload: (ns, cluster) => (ns === NS && cluster === 'demo' ? workload : store) });
    const m = await store.create<Machine>({
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Machine',
      metadata: { name: 'demo-control-plane-aaaaa', namespace: NS, labels: { [LABEL_CLUSTER_NAME]: 'demo', [LABEL_CONTROL_PLANE]: '' } },
      spec: { clusterName: 'demo', bootstrap: { configRef: { kind: 'KubeadmConfig', name: 'demo-control-plane-aaaaa' } }, infrastructureRef: { kind: 'HCSMachine', name: 'x' } },
    } as Machine);
    await store.updateStatus<Machine>({ ...m, status: { nodeRef: { kind: 'Node', name: 'demo-cp-1' } } } as Machine);
    const owner = { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Machine', name: m.metadata.name, uid: m.metadata.uid!, controller: true };
    const cfg = await store.create<KubeObject>({ apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1', kind: 'KubeadmConfig', metadata: { name: 'demo-control-plane-aaaaa', namespace: NS, labels: { [LABEL_CLUSTER_NAME]: 'demo' }, ownerReferences: [owner] }, spec: {} });
    // Not owned by a Machine (yet): skipped even when annotated.
    await store.create<KubeObject>({ apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1', kind: 'KubeadmConfig', metadata: { name: 'orphan', namespace: NS, annotations: { [ANNOTATION_CERTIFICATES_EXPIRY]: '2027-01-01T00:00:00Z' } }, spec: {} });
    const flush = async (): Promise<void> => {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    };
    await flush();
    expect(events.all().filter((e) => e.type === 'kcp.certificates-expiry')).toEqual([]);
    const expiry = new Date(Date.parse(nodeCreated) + 8760 * 3_600_000).toISOString().replace('.000Z', 'Z');
    const annotated = await store.update<KubeObject>({ ...cfg, metadata: { ...cfg.metadata, annotations: { [ANNOTATION_CERTIFICATES_EXPIRY]: expiry } } });
    await store.update<KubeObject>({ ...annotated, metadata: { ...annotated.metadata, labels: { ...annotated.metadata.labels, again: '1' } } });
    await flush();
    const got = events.all().filter((e) => e.type === 'kcp.certificates-expiry');
    expect(got.map((e) => e.message)).toEqual([`KubeadmConfig cpaas-system/demo-control-plane-aaaaa (Machine demo-control-plane-aaaaa, Node demo-cp-1): certificates expire ${expiry} [observed]`]);
    expect(got[0]!.data).toEqual({ machine: 'demo-control-plane-aaaaa', kubeadmConfig: 'demo-control-plane-aaaaa', node: 'demo-cp-1', expiry, nodeCreated, observed: true });
  });
});
