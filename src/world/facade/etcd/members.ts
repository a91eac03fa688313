/**
 * The stacked etcd of a served workload cluster, as the etcd v3 API shows it
 * through `pods/etcd-<node>/portforward` (etcd-server.ts): one member per
 * control plane Node (label node-role.kubernetes.io/control-plane), named
 * after the Node as kubeadm names it (`--name=<node>`), in the order the
 * Nodes registered (a kubeadm join adds the member before its kubelet
 * registers the Node). Derived from the workload cluster's objects, so the
 * same Nodes give the same members; what etcd itself decides is kept here:
 * members removed by MemberRemove (KCP's RemoveEtcdMemberForMachine, before
 * it deletes a control plane Machine; KCP-2 scale-down/rollout) and the
 * leader moved by MoveLeader (ForwardEtcdLeadership). A Node registering
 * again under the same name (a replacement on the same hostname, KCP-2) is a
 * new member: member IDs hash the cluster and the Node's uid.
 *
 * Health: a member answers only while its Node is Ready and it is not down
 * by the testbed's fault (src/world/capi/etcd-faults.ts: the KubeadmControlPlane
 * annotation `testbed.hcs/etcd-member-unhealthy` names its Node; set by
 * setDown, src/harness/realcluster/upstream/etcd-faults.ts); removed members do not answer. Quorum
 * is more than half of the members answering. Without it the members still
 * up answer as a real etcd v3.5 without a leader does: Status with leader 0
 * and errors ["etcdserver: no leader"] (etcdserver/api/v3rpc/maintenance.go
 * Status), and whatever needs raft (a linearizable MemberList, which
 * clientv3 v3.5 sends: cluster.go MemberList `Linearizable: true`; Alarm,
 * MemberRemove) fails with UNAVAILABLE "etcdserver: request timed out"
 * (rpctypes ErrGRPCTimeout; a real member answers so after its request
 * timeout, ~7 s; this one at once). KCP v1.10.10 then marks every Machine's
 * EtcdMemberHealthy False (workload_cluster_conditions.go). forceRecover is
 * the operator's forced recovery: the down members are removed and added
 * back as new members (new IDs), which answer again. Alarms: none.
 *
 * What etcd decided (removed members, re-created members, the leader and
 * the raft term) is kept through `persist` (etcd-forward.ts: a ConfigMap
 * `kube-system/testbed-etcd` of the workload cluster), so a facade started
 * again on the same workload clusters serves the same membership.
 */
import { createHash } from 'node:crypto';
import type { Node } from '../../../product/api/core.js';
import { nodeReady } from '../../../product/api/core.js';
import { ETCD_NO_LEADER, ETCD_REQUEST_TIMED_OUT, hasQuorum } from '../../capi/etcd-faults.js';

export const LABEL_CONTROL_PLANE = 'node-role.kubernetes.io/control-plane';

export interface EtcdMember {
  id: bigint;
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  /** Whether it answers (its Node is Ready). */
  reachable: boolean;
}

export class EtcdError extends Error {
  constructor(
    /** gRPC status code (grpc/codes: 5 NOT_FOUND, 9 FAILED_PRECONDITION, 14 UNAVAILABLE). */
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const id64 = (text: string): bigint => {
  const v = createHash('sha256').update(text).digest().readBigUInt64BE(0);
  return v === 0n ? 1n : v;
};

/** What etcd decided, as `persist` keeps it (IDs as decimal strings). */
export interface EtcdState {
  removed: string[];
  /** Node "<name>/<uid>" → how many times its member was re-created by a forced recovery. */
  recreated: Record<string, number>;
  leader?: string;
  term: string;
}

export interface EtcdPersistence {
  load(): EtcdState | undefined;
  save(state: EtcdState): void;
}

/** One workload cluster's etcd. `nodes` lists the cluster's Nodes now. */
export class WorkloadEtcd {
  private readonly removed = new Set<bigint>();
  private readonly recreated = new Map<string, number>();
  private leaderId: bigint | undefined;
  readonly clusterId: bigint;
  /** Raft term: bumped when the leader changes. */
  private term = 2n;
  /** Nodes whose member is down by the testbed's fault (etcd-faults.ts). */
  private down = new Set<string>();

  constructor(
    private readonly key: string,
    private readonly nodes: () => Node[],
    private readonly persist?: EtcdPersistence,
  ) {
    this.clusterId = id64(`cluster/${key}`);
    const st = persist?.load();
    if (st) {
      for (const r of st.removed) this.removed.add(BigInt(r));
      for (const [k, v] of Object.entries(st.recreated)) this.recreated.set(k, v);
      if (st.leader) this.leaderId = BigInt(st.leader);
      this.term = BigInt(st.term);
    }
  }

  private save(): void {
    this.persist?.save({
      removed: [...this.removed].map(String).sort(),
      recreated: Object.fromEntries([...this.recreated].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      ...(this.leaderId !== undefined ? { leader: String(this.leaderId) } : {}),
      term: String(this.term),
    });
  }

  /** The testbed's fault: the members on these Nodes are down (replaces the previous set). */
  setDown(nodes: Iterable<string>): void {
    this.down = new Set(nodes);
  }

  members(): EtcdMember[] {
    const cp = this.nodes()
      .filter((n) => n.metadata.labels?.[LABEL_CONTROL_PLANE] !== undefined && !n.metadata.deletionTimestamp)
      .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || a.metadata.name.localeCompare(b.metadata.name));
    const out: EtcdMember[] = [];
    for (const n of cp) {
      const node = `${n.metadata.name}/${n.metadata.uid ?? ''}`;
      const gen = this.recreated.get(node) ?? 0;
      const id = id64(`member/${this.key}/${node}${gen ? `/${gen}` : ''}`);
      if (this.removed.has(id)) continue;
      const ip = n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
      out.push({ id, name: n.metadata.name, peerURLs: ip ? [`https://${ip}:2380`] : [], clientURLs: ip ? [`https://${ip}:2379`] : [], reachable: nodeReady(n) && !this.down.has(n.metadata.name) });
    }
    return out;
  }

  /** Raft quorum: more than half of the members answering. */
  quorum(): boolean {
    const ms = this.members();
    return hasQuorum(ms.filter((m) => m.reachable).length, ms.length);
  }

  /** StatusResponse.errors of a member that answers. */
  statusErrors(): string[] {
    return this.quorum() ? [] : [ETCD_NO_LEADER];
  }

  /** A request that goes through raft (or a linearizable read): refused without quorum, as a real member times out. */
  requireQuorum(): void {
    if (!this.quorum()) throw new EtcdError(14, ETCD_REQUEST_TIMED_OUT);
  }

  /**
   * The operator's forced recovery (KCP-5): the members down by the fault are removed and added back as new members
   * (new IDs) that answer; the fault is cleared. Returns their Node names, sorted.
   */
  forceRecover(): string[] {
    const out: string[] = [];
    const members = new Set(this.members().map((m) => m.name));
    for (const n of this.nodes()) {
      if (!this.down.has(n.metadata.name) || !members.has(n.metadata.name)) continue;
      const node = `${n.metadata.name}/${n.metadata.uid ?? ''}`;
      this.recreated.set(node, (this.recreated.get(node) ?? 0) + 1);
      out.push(n.metadata.name);
    }
    this.down = new Set();
    this.term += 1n;
    this.save();
    return out.sort();
  }

  /** The member hosted on Node `name`, if it is one. */
  memberOn(name: string): EtcdMember | undefined {
    return this.members().find((m) => m.name === name);
  }

  /** The leader: none without quorum; else the one MoveLeader chose while it is a reachable member, else the first reachable member. */
  leader(): bigint {
    const ms = this.members();
    if (!hasQuorum(ms.filter((m) => m.reachable).length, ms.length)) return 0n;
    const chosen = ms.find((m) => m.id === this.leaderId && m.reachable);
    const l = chosen ?? ms.find((m) => m.reachable);
    if (l && l.id !== this.leaderId) {
      if (this.leaderId !== undefined) this.term += 1n;
      this.leaderId = l.id;
      this.save();
    }
    return l?.id ?? 0n;
  }

  raftTerm(): bigint {
    this.leader();
    return this.term;
  }

  /** MemberRemove (etcdserver: quorum must remain; a removed or unknown ID is NOT_FOUND). */
  remove(id: bigint): EtcdMember[] {
    const ms = this.members();
    this.requireQuorum();
    const m = ms.find((x) => x.id === id);
    if (!m) throw new EtcdError(5, 'etcdserver: member not found');
    const left = ms.filter((x) => x.id !== id);
    const healthyLeft = left.filter((x) => x.reachable).length;
    if (left.length > 0 && healthyLeft <= left.length / 2) throw new EtcdError(9, 'etcdserver: re-configuration failed due to not enough started members');
    this.removed.add(id);
    this.save();
    return left;
  }

  /** MoveLeader, asked of member `via` (etcd answers it only on the leader). */
  moveLeader(via: bigint, target: bigint): void {
    if (via !== this.leader()) throw new EtcdError(9, 'etcdserver: not leader');
    const t = this.members().find((m) => m.id === target);
    if (!t) throw new EtcdError(5, 'etcdserver: bad leader transferee');
    if (!t.reachable) throw new EtcdError(14, 'etcdserver: leader transferee is not reachable');
    if (t.id !== this.leaderId) this.term += 1n;
    this.leaderId = t.id;
    this.save();
  }
}
