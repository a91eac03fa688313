/**
 * MD-4: when the Machine controller may drain and delete a deleted Machine's
 * Node, after upstream v1.10.10 internal/controllers/machine/machine_controller.go
 * isDeleteNodeAllowed (src/world/capi/machine-delete-gate.ts). Not allowed: no
 * cordon, no drain, no volume-detach wait, the Node stays; only a log line
 * with the cause (upstream sets no condition for it).
 */
import { describe, expect, it } from 'vitest';
import { CAPI_VERSION, CONTROLPLANE_VERSION, LABEL_CLUSTER_NAME, LABEL_CONTROL_PLANE } from '../../src/product/api/capi.js';
import type { Cluster, Machine } from '../../src/product/api/capi.js';
import type { Node } from '../../src/product/api/core.js';
import { INFRA_VERSION } from '../../src/product/api/hcs.js';
import { isDeleteNodeAllowed, NODE_DELETE_SKIP } from '../../src/world/capi/machine-delete-gate.js';
import { CAPI_DEPLOYMENT } from '../../src/world/capi/util.js';
import type { KubeClient } from '../../src/core/kube/client.js';
import { KubeApiError } from '../../src/core/kube/errors.js';
import type { KubeObject, ObjectRef } from '../../src/core/kube/types.js';
import { createEmbeddedEnv } from '../../src/world/embedded.js';
import { CLUSTER, CP_MACHINE, NS, controlPlaneMachine, createWorld, machineDeployment, machines, runningCount, type World } from './fixtures.js';

const MIN = 60_000;
const MD = `${CLUSTER}-md-0`;

async function oneWorker(w: World): Promise<{ machine: Machine; node: string }> {
  await w.mgmt.create(machineDeployment(1, { maxSurge: 1, maxUnavailable: 0 }));
  const r = await w.sim.runUntil(() => runningCount(w) === 1 && !!machines(w)[0]?.status?.nodeRef, 30 * MIN);
  expect(r.ok).toBe(true);
  const machine = machines(w)[0]!;
  return { machine, node: machine.status!.nodeRef!.name };
}

const typesFor = (w: World, machine: string): string[] =>
  w.events
    .all()
    .filter((e) => e.data?.machine === machine && e.type.startsWith('machine.') && e.type !== 'machine.phase')
    .map((e) => e.type);

describe('Machine deletion keeps the Node when upstream isDeleteNodeAllowed says no (MD-4)', () => {
  it('no active control plane Machine (errNoControlPlaneNodes): neither cordoned, drained nor deleted; the Machine still goes', async () => {
    const w = await createWorld(31, undefined, { controlPlaneMachine: false });
    const { machine, node } = await oneWorker(w);
    await w.mgmt.patch({ kind: 'MachineDeployment', namespace: NS, name: MD }, 'merge', { spec: { replicas: 0 } });
    // While it waits for its infrastructure machine (the fake takes 20 s): no drain or volume-detach condition, as upstream.
    await w.sim.advance(5_000);
    const deleting = machines(w)[0]!;
    expect(deleting.status?.phase).toBe('Deleting');
    expect((deleting.status?.conditions ?? []).map((c) => c.type)).not.toContain('DrainingSucceeded');
    expect((deleting.status?.conditions ?? []).map((c) => c.type)).not.toContain('VolumeDetachSucceeded');
    const r = await w.sim.runUntil(() => machines(w).length === 0, 30 * MIN);
    expect(r.ok).toBe(true);
    const wl = w.workloads.store(NS, CLUSTER);
    const kept = wl.getSync<Node>({ kind: 'Node', name: node });
    expect(kept).toBeDefined();
    expect(kept?.spec.unschedulable).toBeUndefined();
    // Only the infrastructure part of the deletion ran.
    expect(typesFor(w, machine.metadata.name)).toEqual(['machine.node-deletion-skipped', 'machine.infrastructure-deleting']);
    const skipped = w.events.all().find((e) => e.type === 'machine.node-deletion-skipped')!;
    expect(skipped.data).toMatchObject({ node, cause: 'no control plane members' });
    // Upstream's log line, with its cause.
    expect(w.logs.text(CAPI_DEPLOYMENT)).toContain('Skipping deletion of Kubernetes Node associated with Machine as it is not allowed');
    // Nor a Kubernetes Event (upstream records none for it).
    expect(w.events.all().filter((e) => e.type.startsWith('event.') && e.data?.name === machine.metadata.name)).toEqual([]);
  });

  it('the control plane Machine being deleted does not count itself (collections.ActiveMachines)', async () => {
    const w = await createWorld(32);
    const { node } = await oneWorker(w);
    // The only control plane Machine is deleted first (it never got infrastructure: it goes at once)...
    await w.mgmt.delete({ kind: 'Machine', namespace: NS, name: CP_MACHINE });
    await w.sim.advance(5_000);
    expect(w.mgmt.getSync({ kind: 'Machine', namespace: NS, name: CP_MACHINE })).toBeUndefined();
    // ...so the worker's Node is kept when the worker goes.
    await w.mgmt.patch({ kind: 'MachineDeployment', namespace: NS, name: MD }, 'merge', { spec: { replicas: 0 } });
    expect((await w.sim.runUntil(() => machines(w).length === 0, 30 * MIN)).ok).toBe(true);
    expect(w.workloads.store(NS, CLUSTER).getSync<Node>({ kind: 'Node', name: node })).toBeDefined();
  });

  it('an active control plane Machine: cordon, drain, infrastructure, then the Node is deleted', async () => {
    const w = await createWorld(33);
    const { machine, node } = await oneWorker(w);
    await w.mgmt.patch({ kind: 'MachineDeployment', namespace: NS, name: MD }, 'merge', { spec: { replicas: 0 } });
    expect((await w.sim.runUntil(() => machines(w).length === 0, 30 * MIN)).ok).toBe(true);
    expect(w.workloads.store(NS, CLUSTER).getSync<Node>({ kind: 'Node', name: node })).toBeUndefined();
    expect(typesFor(w, machine.metadata.name)).toEqual(['machine.node-cordoned', 'machine.node-drained', 'machine.infrastructure-deleting', 'machine.node-deleted']);
  });

  it('the Cluster being deleted (errClusterIsBeingDeleted): Machines go without drain or Node deletion', async () => {
    const w = await createWorld(34);
    const { machine, node } = await oneWorker(w);
    await w.mgmt.delete({ kind: 'Cluster', namespace: NS, name: CLUSTER });
    expect((await w.sim.runUntil(() => !w.mgmt.getSync({ kind: 'Cluster', namespace: NS, name: CLUSTER }), 30 * MIN)).ok).toBe(true);
    expect(typesFor(w, machine.metadata.name)).toEqual(['machine.node-deletion-skipped', 'machine.infrastructure-deleting']);
    expect(w.events.all().find((e) => e.type === 'machine.node-deletion-skipped' && e.data?.machine === machine.metadata.name)?.data).toMatchObject({ cause: 'cluster is being deleted' });
    expect(w.workloads.store(NS, CLUSTER).getSync<Node>({ kind: 'Node', name: node })?.spec.unschedulable).toBeUndefined();
  });

  it('no nodeRef and no Node with its providerID (errNilNodeRef): the infrastructure is deleted, nothing else', async () => {
    // The Node would join 10 min after the server is ACTIVE: the Machine is deleted before that.
    const w = await createWorld(35, { provisionMs: 30_000, deleteMs: 20_000, joinMs: 10 * MIN });
    await w.mgmt.create(machineDeployment(1, { maxSurge: 1, maxUnavailable: 0 }));
    expect((await w.sim.runUntil(() => !!machines(w)[0]?.spec.providerID, 30 * MIN)).ok).toBe(true);
    const machine = machines(w)[0]!;
    expect(machine.status?.nodeRef).toBeUndefined();
    await w.mgmt.patch({ kind: 'MachineDeployment', namespace: NS, name: MD }, 'merge', { spec: { replicas: 0 } });
    expect((await w.sim.runUntil(() => machines(w).length === 0, 30 * MIN)).ok).toBe(true);
    expect(typesFor(w, machine.metadata.name)).toEqual(['machine.node-deletion-skipped', 'machine.infrastructure-deleting']);
    expect(w.events.all().find((e) => e.type === 'machine.node-deletion-skipped')?.data).toMatchObject({ cause: 'noderef is nil' });
  });
});

// ---- the gate itself, for the controlPlaneRef cases ---------------------------

const cluster = (cpRef?: { kind: string; name: string }, deleting = false): Cluster => ({
  apiVersion: CAPI_VERSION,
  kind: 'Cluster',
  metadata: { name: CLUSTER, namespace: NS, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: { ...(cpRef ? { controlPlaneRef: { apiVersion: CONTROLPLANE_VERSION, kind: cpRef.kind, name: cpRef.name, namespace: NS } } : {}) },
});

const worker = (nodeRef: string | undefined, providerID = 'hcs://demo/w-1'): Machine => ({
  apiVersion: CAPI_VERSION,
  kind: 'Machine',
  metadata: { name: 'w-1', namespace: NS, labels: { [LABEL_CLUSTER_NAME]: CLUSTER }, deletionTimestamp: '2026-01-01T00:00:00Z' },
  spec: { clusterName: CLUSTER, providerID, bootstrap: {}, infrastructureRef: { apiVersion: INFRA_VERSION, kind: 'HCSMachine', name: 'w-1' } },
  ...(nodeRef ? { status: { nodeRef: { kind: 'Node', name: nodeRef } } } : {}),
});

/**
 * The management client plus control plane objects of a kind the testbed's
 * store does not serve (an externally managed control plane such as EKS's
 * AWSManagedControlPlane, which sets status.externalManagedControlPlane).
 */
function withControlPlanes(mgmt: KubeClient, objects: KubeObject[]): KubeClient {
  const find = (ref: ObjectRef): KubeObject | undefined => objects.find((o) => o.kind === ref.kind && o.metadata.name === ref.name && o.metadata.namespace === ref.namespace);
  const get = async <T extends KubeObject>(ref: ObjectRef): Promise<T | undefined> => {
    if (ref.kind === 'ManagedControlPlane') return find(ref) as T | undefined;
    return mgmt.get<T>(ref);
  };
  return new Proxy(mgmt, {
    get(target, p, recv) {
      if (p === 'get' || p === 'getShared') return get;
      return Reflect.get(target, p, recv) as unknown;
    },
  });
}

const managed = (external: boolean | undefined, deleting = false): KubeObject & { status?: { externalManagedControlPlane?: boolean } } => ({
  apiVersion: CONTROLPLANE_VERSION,
  kind: 'ManagedControlPlane',
  metadata: { name: 'cp', namespace: NS, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  ...(external === undefined ? {} : { status: { externalManagedControlPlane: external } }),
});

async function gateWorld(cpMachines: number): Promise<KubeClient> {
  const env = createEmbeddedEnv({ seed: 1 });
  for (let i = 0; i < cpMachines; i++) await env.mgmt.create(controlPlaneMachine(`${CLUSTER}-cp-${i}`));
  // A control plane Machine of another cluster never counts.
  await env.mgmt.create({ ...controlPlaneMachine('other-cp-0'), metadata: { name: 'other-cp-0', namespace: NS, labels: { [LABEL_CLUSTER_NAME]: 'other', [LABEL_CONTROL_PLANE]: '' } }, spec: { ...controlPlaneMachine().spec, clusterName: 'other' } });
  return env.mgmt;
}

const noNode = async (): Promise<undefined> => undefined;

describe('isDeleteNodeAllowed (upstream v1.10.10 machine_controller.go)', () => {
  it('cluster being deleted is checked first, before the nodeRef', async () => {
    const mgmt = await gateWorld(1);
    expect(await isDeleteNodeAllowed({ mgmt, machine: worker(undefined), cluster: cluster(undefined, true), nodeByProviderID: noNode })).toMatchObject({ allowed: false, cause: NODE_DELETE_SKIP.clusterDeleting });
  });

  it('no nodeRef: the Node is looked up once more by providerID (the Machine\'s, else the infrastructure machine\'s)', async () => {
    const mgmt = await gateWorld(1);
    expect(await isDeleteNodeAllowed({ mgmt, machine: worker(undefined), cluster: cluster(), nodeByProviderID: noNode })).toMatchObject({ allowed: false, cause: 'noderef is nil' });
    const seen: string[] = [];
    const lookup = async (pid: string) => (seen.push(pid), { name: 'worker-1', uid: 'u1' });
    expect(await isDeleteNodeAllowed({ mgmt, machine: worker(undefined), cluster: cluster(), nodeByProviderID: lookup })).toEqual({ allowed: true, nodeName: 'worker-1', foundNode: { name: 'worker-1', uid: 'u1' }, notes: [] });
    const noPid = { ...worker(undefined), spec: { ...worker(undefined).spec, providerID: undefined } } as Machine;
    expect(await isDeleteNodeAllowed({ mgmt, machine: noPid, cluster: cluster(), infraProviderID: 'hcs://demo/from-infra', nodeByProviderID: lookup })).toMatchObject({ allowed: true, nodeName: 'worker-1' });
    expect(seen).toEqual(['hcs://demo/w-1', 'hcs://demo/from-infra']);
    // A failing lookup is best effort (logged upstream): no nodeRef.
    const failing = async (): Promise<never> => {
      throw new Error('workload cluster unreachable');
    };
    expect(await isDeleteNodeAllowed({ mgmt, machine: worker(undefined), cluster: cluster(), nodeByProviderID: failing })).toMatchObject({ allowed: false, cause: 'noderef is nil' });
  });

  it('no controlPlaneRef: allowed only while the cluster has an active control plane Machine', async () => {
    expect(await isDeleteNodeAllowed({ mgmt: await gateWorld(0), machine: worker('worker-1'), cluster: cluster(), nodeByProviderID: noNode })).toMatchObject({ allowed: false, cause: 'no control plane members' });
    expect(await isDeleteNodeAllowed({ mgmt: await gateWorld(1), machine: worker('worker-1'), cluster: cluster(), nodeByProviderID: noNode })).toEqual({ allowed: true, nodeName: 'worker-1', notes: [] });
  });

  it('an externally managed control plane (status.externalManagedControlPlane) skips the Machine count: drained and deleted', async () => {
    const ref = { kind: 'ManagedControlPlane', name: 'cp' };
    const mgmt = withControlPlanes(await gateWorld(0), [managed(true)]);
    expect(await isDeleteNodeAllowed({ mgmt, machine: worker('worker-1'), cluster: cluster(ref), nodeByProviderID: noNode })).toEqual({ allowed: true, nodeName: 'worker-1', notes: [] });
    // externalManagedControlPlane false or absent: the count decides (util.IsExternalManagedControlPlane).
    for (const cp of [managed(false), managed(undefined)]) {
      const m2 = withControlPlanes(await gateWorld(0), [cp]);
      expect(await isDeleteNodeAllowed({ mgmt: m2, machine: worker('worker-1'), cluster: cluster(ref), nodeByProviderID: noNode })).toMatchObject({ allowed: false, cause: 'no control plane members' });
    }
  });

  it('the control plane object being deleted (errControlPlaneIsBeingDeleted), even when externally managed', async () => {
    const mgmt = withControlPlanes(await gateWorld(1), [managed(true, true)]);
    expect(await isDeleteNodeAllowed({ mgmt, machine: worker('worker-1'), cluster: cluster({ kind: 'ManagedControlPlane', name: 'cp' }), nodeByProviderID: noNode })).toMatchObject({ allowed: false, cause: 'control plane is being deleted' });
  });

  it('a controlPlaneRef whose object does not exist is logged and the check continues with the Machine count', async () => {
    const ref = { kind: 'KubeadmControlPlane', name: 'gone' };
    const with1 = await isDeleteNodeAllowed({ mgmt: await gateWorld(1), machine: worker('worker-1'), cluster: cluster(ref), nodeByProviderID: noNode });
    expect(with1).toMatchObject({ allowed: true, nodeName: 'worker-1' });
    expect(with1.notes).toEqual([`Control plane object specified in cluster spec.controlPlaneRef does not exist: KubeadmControlPlane ${NS}/gone`]);
    expect(await isDeleteNodeAllowed({ mgmt: await gateWorld(0), machine: worker('worker-1'), cluster: cluster(ref), nodeByProviderID: noNode })).toMatchObject({ allowed: false, cause: 'no control plane members' });
  });

  it('any other error reading the control plane object is returned (the reconcile retries)', async () => {
    const base = await gateWorld(1);
    const mgmt = new Proxy(base, {
      get(target, p, recv) {
        if (p === 'get' || p === 'getShared') {
          return async (ref: ObjectRef) => {
            if (ref.kind === 'KubeadmControlPlane') throw new KubeApiError('InternalError', 'etcdserver: leader changed');
            return base.get(ref);
          };
        }
        return Reflect.get(target, p, recv) as unknown;
      },
    });
    await expect(isDeleteNodeAllowed({ mgmt, machine: worker('worker-1'), cluster: cluster({ kind: 'KubeadmControlPlane', name: 'cp' }), nodeByProviderID: noNode })).rejects.toThrow(/leader changed/);
  });
});

describe('the volume-detach wait (upstream isNodeVolumeDetachingAllowed / shouldWaitForNodeVolumes)', () => {
  it('nodeVolumeDetachTimeout exceeded: no more waiting, VolumeDetachSucceeded stays False, no Event', async () => {
    const w = await createWorld(36, { provisionMs: 30_000, deleteMs: 20_000, volumes: true });
    const { machine, node } = await oneWorker(w);
    await w.mgmt.patch({ kind: 'Machine', namespace: NS, name: machine.metadata.name }, 'merge', { spec: { nodeVolumeDetachTimeout: '2m' } });
    const t0 = w.clock.now();
    await w.mgmt.patch({ kind: 'MachineDeployment', namespace: NS, name: MD }, 'merge', { spec: { replicas: 0 } });
    await w.sim.advance(MIN);
    // Still waiting: the Node reports a volume attached.
    expect(w.mgmt.getSync({ kind: 'HCSMachine', namespace: NS, name: machine.metadata.name })?.metadata.deletionTimestamp).toBeUndefined();
    expect((await w.sim.runUntil(() => w.events.all().some((e) => e.type === 'machine.volume-detach-timeout'), 2 * MIN)).ok).toBe(true);
    const ev = w.events.all().find((e) => e.type === 'machine.volume-detach-timeout')!;
    expect(ev.t - t0).toBeGreaterThan(2 * MIN);
    expect(ev.t - t0).toBeLessThanOrEqual(2 * MIN + 10_000);
    const deleting = machines(w)[0]!;
    expect(deleting.status?.conditions?.find((c) => c.type === 'VolumeDetachSucceeded')).toMatchObject({ status: 'False', reason: 'WaitingForVolumeDetach' });
    expect(w.events.all().filter((e) => e.type === 'event.VolumeDetachTimeout')).toEqual([]);
    expect((await w.sim.runUntil(() => machines(w).length === 0, 30 * MIN)).ok).toBe(true);
    expect(w.workloads.store(NS, CLUSTER).getSync<Node>({ kind: 'Node', name: node })).toBeUndefined();
  });

  it('an unreachable Node (Ready Unknown) is not waited for, volumes or not', async () => {
    const w = await createWorld(37, { provisionMs: 30_000, deleteMs: 20_000, volumes: true });
    const { machine, node } = await oneWorker(w);
    const wl = w.workloads.store(NS, CLUSTER);
    const n = wl.getSync<Node>({ kind: 'Node', name: node })!;
    await wl.updateStatus<Node>({ ...n, status: { ...n.status, conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', lastTransitionTime: '2026-01-01T00:00:00Z' }] } });
    await w.mgmt.patch({ kind: 'MachineDeployment', namespace: NS, name: MD }, 'merge', { spec: { replicas: 0 } });
    expect((await w.sim.runUntil(() => machines(w).length === 0, 5 * MIN)).ok).toBe(true);
    expect(typesFor(w, machine.metadata.name)).toContain('machine.node-deleted');
    expect(w.events.all().some((e) => e.type === 'machine.volume-detach-timeout')).toBe(false);
  });
});
