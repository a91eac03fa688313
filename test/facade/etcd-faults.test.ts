/**
 * KCP-5 on the etcd served to a real Cluster API (src/harness/realcluster/upstream/etcd-faults.ts,
 * src/world/facade/etcd/members.ts): the testbed's fault annotation on the
 * KubeadmControlPlane takes the named members down, the etcd left without
 * quorum answers as etcd v3.5 does (Status: leader 0, "etcdserver: no leader";
 * raft requests: "etcdserver: request timed out"), the testbed etcd gives the
 * operator hint once (Warning EtcdQuorumLost, component testbed-etcd), and the
 * operator action re-creates the down members and removes both annotations.
 * The Go clientv3 view of the same etcd: test/facade/etcd-portforward.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { LABEL_CLUSTER_NAME } from '../../src/product/api/capi.js';
import type { KubeadmControlPlane } from '../../src/product/api/capi.js';
import { ANN_ETCD_MEMBER_UNHEALTHY, ANN_RESTORE_ETCD_QUORUM, ETCD_NO_LEADER } from '../../src/world/capi/etcd-faults.js';
import { EtcdError, WorkloadEtcd } from '../../src/world/facade/etcd/members.js';
import { configMapPersistence } from '../../src/world/facade/portforward/etcd-forward.js';
import type { Node } from '../../src/product/api/core.js';
import { createEmbeddedEnv } from '../../src/world/embedded.js';
import { setupServedEtcdFaults } from '../../src/harness/realcluster/upstream/etcd-faults.js';
import { kubeadmControlPlane } from '../capi/fixtures.js';

const NS = 'cpaas-system';
const NODES = ['demo-cp-1', 'demo-cp-2', 'demo-cp-3'];

async function world() {
  const env = createEmbeddedEnv({ seed: 5 });
  const store = env.workloads.store(NS, 'demo');
  for (const [i, name] of NODES.entries()) {
    await store.create({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'node-role.kubernetes.io/control-plane': '' } } });
    const n = store.getSync<Node>({ kind: 'Node', name })!;
    await store.updateStatus({ ...n, status: { addresses: [{ type: 'InternalIP', address: `192.168.1.${11 + i}` }], conditions: [{ type: 'Ready', status: 'True' }] } });
    env.clock.advanceBy(60_000);
  }
  const etcd = new WorkloadEtcd(`${NS}/demo`, () => store.listSync<Node>('Node'), configMapPersistence(store));
  setupServedEtcdFaults(env.ctx, (ns, cluster) => (ns === NS && cluster === 'demo' ? etcd : undefined));
  const k = kubeadmControlPlane(3, 0);
  await env.mgmt.create<KubeadmControlPlane>({ ...k, metadata: { ...k.metadata, labels: { ...(k.metadata.labels ?? {}), [LABEL_CLUSTER_NAME]: 'demo' } } });
  const annotate = (a: Record<string, string | null>) => env.mgmt.patch({ kind: 'KubeadmControlPlane', namespace: NS, name: k.metadata.name }, 'merge', { metadata: { annotations: a } });
  const kcp = () => env.mgmt.getSync<KubeadmControlPlane>({ kind: 'KubeadmControlPlane', namespace: NS, name: k.metadata.name })!;
  return { env, store, etcd, annotate, kcp };
}

describe('KCP-5: the testbed etcd fault on the served etcd (src/harness/realcluster/upstream/etcd-faults.ts)', () => {
  it('two of three members down: no leader, raft requests time out, one EtcdQuorumLost hint; the forced recovery re-creates them and clears the annotations', async () => {
    const w = await world();
    const ids = w.etcd.members().map((m) => m.id);
    expect(w.etcd.quorum()).toBe(true);
    expect(w.etcd.leader()).toBe(ids[0]);
    await w.annotate({ [ANN_ETCD_MEMBER_UNHEALTHY]: 'demo-cp-1,demo-cp-2' });
    await w.env.sim.advance(60_000);
    expect(w.etcd.members().map((m) => m.reachable)).toEqual([false, false, true]);
    expect(w.etcd.quorum()).toBe(false);
    expect(w.etcd.leader()).toBe(0n);
    expect(w.etcd.statusErrors()).toEqual([ETCD_NO_LEADER]);
    expect(() => w.etcd.remove(ids[0]!)).toThrow(new EtcdError(14, 'etcdserver: request timed out'));
    const hints = w.env.events.all().filter((e) => e.type === 'event.EtcdQuorumLost');
    expect(hints).toHaveLength(1); // once, though the controller looks again every 15 s
    expect(hints[0]!.rules).toEqual(['KCP-5']);
    expect(hints[0]!.message).toContain('1/3 members up (demo-cp-3; down: demo-cp-1, demo-cp-2)');
    expect(w.env.events.all().filter((e) => e.type === 'etcd.quorum-lost')).toHaveLength(1);

    await w.annotate({ [ANN_RESTORE_ETCD_QUORUM]: 'true' });
    await w.env.sim.advance(1_000);
    expect(w.kcp().metadata.annotations?.[ANN_RESTORE_ETCD_QUORUM]).toBeUndefined();
    expect(w.kcp().metadata.annotations?.[ANN_ETCD_MEMBER_UNHEALTHY]).toBeUndefined();
    const after = w.etcd.members();
    expect(after.map((m) => [m.name, m.reachable])).toEqual(NODES.map((n) => [n, true]));
    expect(after[2]!.id).toBe(ids[2]);
    expect(after[0]!.id).not.toBe(ids[0]); // re-added as a new member
    expect(w.etcd.statusErrors()).toEqual([]);
    const restored = w.env.events.all().filter((e) => e.type === 'etcd.quorum-restored');
    expect(restored.map((e) => e.data?.recreated)).toEqual([['demo-cp-1', 'demo-cp-2']]);
    expect(w.env.events.all().some((e) => e.type === 'event.EtcdQuorumRestored')).toBe(true);

    // What etcd decided is in the workload cluster's ConfigMap: a new WorkloadEtcd on the same store serves the same members.
    await w.env.sim.advance(1_000);
    const again = new WorkloadEtcd(`${NS}/demo`, () => w.store.listSync<Node>('Node'), configMapPersistence(w.store));
    expect(again.members().map((m) => m.id)).toEqual(after.map((m) => m.id));
  });

  it('one of three down keeps quorum: no hint, the member left answers without errors', async () => {
    const w = await world();
    await w.annotate({ [ANN_ETCD_MEMBER_UNHEALTHY]: 'demo-cp-2' });
    await w.env.sim.advance(60_000);
    expect(w.etcd.quorum()).toBe(true);
    expect(w.etcd.statusErrors()).toEqual([]);
    expect(w.env.events.all().some((e) => e.type === 'event.EtcdQuorumLost')).toBe(false);
  });
});
