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
 * Health: a member answers only while its Node is Ready (a member on a Node
 * that is not Ready cannot be reached, so KCP's EtcdMemberHealthy is not
 * True); removed members do not answer. Alarms: none.
 */
import { createHash } from 'node:crypto';
import type { Node } from '../api/core.js';
import { nodeReady } from '../api/core.js';

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

/** One workload cluster's etcd. `nodes` lists the cluster's Nodes now. */
export class WorkloadEtcd {
  private readonly removed = new Set<bigint>();
  private leaderId: bigint | undefined;
  readonly clusterId: bigint;
  /** Raft term: bumped when the leader changes. */
  private term = 2n;

  constructor(
    private readonly key: string,
    private readonly nodes: () => Node[],
  ) {
    this.clusterId = id64(`cluster/${key}`);
  }

  members(): EtcdMember[] {
    const cp = this.nodes()
      .filter((n) => n.metadata.labels?.[LABEL_CONTROL_PLANE] !== undefined && !n.metadata.deletionTimestamp)
      .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || a.metadata.name.localeCompare(b.metadata.name));
    const out: EtcdMember[] = [];
    for (const n of cp) {
      const id = id64(`member/${this.key}/${n.metadata.name}/${n.metadata.uid ?? ''}`);
      if (this.removed.has(id)) continue;
      const ip = n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
      out.push({ id, name: n.metadata.name, peerURLs: ip ? [`https://${ip}:2380`] : [], clientURLs: ip ? [`https://${ip}:2379`] : [], reachable: nodeReady(n) });
    }
    return out;
  }

  /** The member hosted on Node `name`, if it is one. */
  memberOn(name: string): EtcdMember | undefined {
    return this.members().find((m) => m.name === name);
  }

  /** The leader: the one MoveLeader chose while it is a reachable member, else the first reachable member. */
  leader(): bigint {
    const ms = this.members();
    const chosen = ms.find((m) => m.id === this.leaderId && m.reachable);
    const l = chosen ?? ms.find((m) => m.reachable);
    if (l && l.id !== this.leaderId) {
      if (this.leaderId !== undefined) this.term += 1n;
      this.leaderId = l.id;
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
    const m = ms.find((x) => x.id === id);
    if (!m) throw new EtcdError(5, 'etcdserver: member not found');
    const left = ms.filter((x) => x.id !== id);
    const healthyLeft = left.filter((x) => x.reachable).length;
    if (left.length > 0 && healthyLeft <= left.length / 2) throw new EtcdError(9, 'etcdserver: re-configuration failed due to not enough started members');
    this.removed.add(id);
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
  }
}
