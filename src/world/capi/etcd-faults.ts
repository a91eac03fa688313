/**
 * The testbed's etcd faults (KCP-5), one model for both Cluster APIs: the
 * model's KubeadmControlPlane (kcp.ts keeps the members in the workload
 * cluster's `kube-system/testbed-control-plane` record) and the etcd the
 * facade serves to the real KCP through `pods/etcd-<node>/portforward`
 * (src/world/facade/etcd/members.ts). Neither KCP reads these annotations as a
 * KCP: they are the testbed's knobs on the workload cluster's etcd, put on
 * the KubeadmControlPlane because that is where a scenario names the
 * control plane.
 *
 * - `testbed.hcs/etcd-member-unhealthy: "<node|machine>[,…]"`: the etcd
 *   members on those Nodes are down (their etcd does not answer: a
 *   port-forward to their pod is refused, as for a stopped etcd process).
 *   Pool hostnames (`demo-cp-1`) stay the same across replacements, so a
 *   scenario names Nodes; the model also accepts Machine names.
 * - Quorum: more than half of the members up. Without it a real etcd has
 *   no leader: every member still up answers Maintenance.Status with
 *   `leader: 0` and `errors: ["etcdserver: no leader"]`
 *   (go.etcd.io/etcd/server/v3 v3.5 etcdserver/api/v3rpc/maintenance.go
 *   Status: `if resp.Leader == raft.None { resp.Errors = append(…,
 *   ErrNoLeader) }`), and whatever needs raft (a linearizable MemberList,
 *   MemberRemove, MoveLeader, Alarm) fails with `etcdserver: request timed
 *   out` (rpctypes ErrGRPCTimeout, codes.Unavailable) after the server's
 *   request timeout.
 * - What KCP v1.10.10 makes of it
 *   (controlplane/kubeadm/internal/workload_cluster_conditions.go
 *   getCurrentEtcdMembersAndAlarms): it connects to the first etcd pod that
 *   answers (etcd_client_generator.go forFirstAvailableNode: the client
 *   reads Status when it is created, etcd/etcd.go newEtcdClient), and when
 *   that Status has errors it marks EVERY Machine with a Node and no
 *   deletionTimestamp `EtcdMemberHealthy` False, severity Error, reason
 *   `EtcdMemberUnhealthy`, message `Etcd endpoint etcd-<node> reports
 *   errors: etcdserver: no leader`; the KCP's `EtcdClusterHealthy` is then
 *   False, reason `EtcdClusterUnhealthy`, severity Error, message `Following
 *   Machines are reporting etcd member errors: <sorted names>`
 *   (aggregateConditionsFromMachinesToKCP). The preflight checks
 *   (controllers/scale.go preflightChecks, run before every scale up and
 *   scale down, rollouts included) then fail on every Machine but the one
 *   being removed: a Warning Event `ControlPlaneUnhealthy` "Waiting for
 *   control plane to pass preflight checks to continue reconciliation:
 *   [Machine <m> reports EtcdMemberHealthy condition is false (Error, Etcd
 *   endpoint …), …]" and a requeue after 15 s. No Event or reason names
 *   quorum, and nothing tells the operator what to do.
 * - The operator hint is therefore the testbed etcd's own (both modes): a
 *   Warning Event `EtcdQuorumLost` on the KubeadmControlPlane (component
 *   `testbed-etcd`, rule KCP-5) naming the up and down members and the
 *   action, and the run's event `etcd.quorum-lost` (source workload).
 * - `testbed.hcs/restore-etcd-quorum: "true"`: the operator's forced
 *   recovery (etcd's disaster-recovery procedure: the surviving members
 *   form the cluster, the failed members are removed, their data wiped and
 *   added back as new members). Afterwards every member is up (the re-added
 *   ones with new member IDs), both annotations are removed, a Normal Event
 *   `EtcdQuorumRestored` and the run's event `etcd.quorum-restored` say
 *   which members were re-created.
 */

import type { KubeadmControlPlane } from '../../product/api/capi.js';
import type { ControllerContext } from '../../core/runtime/context.js';
import { keyFor } from './util.js';

/** Testbed operator action (KCP-5): forced etcd recovery. */
export const ANN_RESTORE_ETCD_QUORUM = 'testbed.hcs/restore-etcd-quorum';
/** Testbed fault (KCP-5): comma-separated Nodes (or, in the model, Machines) whose etcd member is down. */
export const ANN_ETCD_MEMBER_UNHEALTHY = 'testbed.hcs/etcd-member-unhealthy';
/** The component of the testbed etcd's Events. */
export const ETCD_COMPONENT = 'testbed-etcd';
/** etcdserver.ErrNoLeader: what a member without a leader lists in StatusResponse.errors. */
export const ETCD_NO_LEADER = 'etcdserver: no leader';
/** rpctypes.ErrGRPCTimeout (codes.Unavailable): a raft request of a member without quorum. */
export const ETCD_REQUEST_TIMED_OUT = 'etcdserver: request timed out';

export interface EtcdFaults {
  /** Names (Nodes, or Machines in the model) whose member is down. */
  down: Set<string>;
  /** The operator asked for the forced recovery. */
  restore: boolean;
}

export function etcdFaultsOf(annotations: Record<string, string> | undefined): EtcdFaults {
  const down = new Set((annotations?.[ANN_ETCD_MEMBER_UNHEALTHY] ?? '').split(',').map((x) => x.trim()).filter(Boolean));
  return { down, restore: annotations?.[ANN_RESTORE_ETCD_QUORUM] === 'true' };
}

/** Raft quorum: more than half of the members up (no members: nothing to lose). */
export function hasQuorum(up: number, members: number): boolean {
  return members === 0 || up * 2 > members;
}

/** The `EtcdQuorumLost` Event's message (KCP-5): what is down and what the operator does. */
export function quorumLostMessage(up: string[], down: string[], members: number): string {
  return (
    `KCP-5: etcd has no quorum: ${up.length}/${members} members up (${up.join(', ') || 'none'}; down: ${down.join(', ') || 'none'}); ` +
    `etcd has no leader, so KubeadmControlPlane can neither add nor remove a member and every scale operation, a rollback included, waits. ` +
    `Operator action: restore quorum (forced recovery), e.g. kubectl annotate kubeadmcontrolplane <name> ${ANN_RESTORE_ETCD_QUORUM}=true`
  );
}

export function quorumRestoredMessage(recreated: string[]): string {
  return `KCP-5: etcd quorum restored by operator action (${ANN_RESTORE_ETCD_QUORUM}): forced recovery; members re-created: ${recreated.join(', ') || '(none)'}`;
}

/** KCP v1.10.10's EtcdMemberHealthy message when the etcd endpoint it reached reports errors (workload_cluster_conditions.go). */
export function endpointErrorsMessage(node: string, errors: string[]): string {
  return `Etcd endpoint etcd-${node} reports errors: ${errors.join(', ')}`;
}

/** Where the testbed etcd reports: the run's event log and Kubernetes Events. */
type EtcdReporter = Pick<ControllerContext, 'events' | 'recorder'>;

/** Quorum lost (KCP-5), once per loss: the run's `etcd.quorum-lost` and the Warning Event `EtcdQuorumLost` with the operator hint. */
export async function reportQuorumLost(ctx: EtcdReporter, kcp: KubeadmControlPlane, up: string[], down: string[], members: number): Promise<void> {
  const msg = quorumLostMessage(up, down, members);
  ctx.events.record({ source: 'workload', type: 'etcd.quorum-lost', message: `KubeadmControlPlane ${keyFor(kcp)}: ${msg}`, data: { kcp: kcp.metadata.name, up, down }, rules: ['KCP-5'] });
  await ctx.recorder.record('workload', ETCD_COMPONENT, kcp, 'Warning', 'EtcdQuorumLost', msg, ['KCP-5']);
}

/** Forced recovery done (KCP-5): the run's `etcd.quorum-restored` and the Normal Event `EtcdQuorumRestored`, naming the re-created members. */
export async function reportQuorumRestored(ctx: EtcdReporter, kcp: KubeadmControlPlane, recreated: string[]): Promise<void> {
  const msg = quorumRestoredMessage(recreated);
  ctx.events.record({ source: 'workload', type: 'etcd.quorum-restored', message: `KubeadmControlPlane ${keyFor(kcp)}: ${msg}`, data: { kcp: kcp.metadata.name, recreated }, rules: ['KCP-5'] });
  await ctx.recorder.record('workload', ETCD_COMPONENT, kcp, 'Normal', 'EtcdQuorumRestored', msg, ['KCP-5']);
}
