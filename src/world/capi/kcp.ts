/**
 * KubeadmControlPlane controller, modelled on cluster-api
 * controlplane/kubeadm/internal/controllers/{controller.go, scale.go,
 * upgrade.go, helpers.go} and controlplane/kubeadm/internal/control_plane.go
 * (v1beta1 API, v1.5+ behaviour), read, not copied:
 * - reconcile: outdated Machines (version, infrastructure template,
 *   ClusterConfiguration annotation) → rollout: scale up while
 *   machines < replicas + maxSurge, otherwise scale down one outdated Machine;
 *   no Machines and not initialized → create the first Machine (kubeadm init);
 *   fewer / more Machines than replicas → scale up / down;
 * - selectMachineForScaleDown: delete-annotated outdated > delete-annotated >
 *   unhealthy outdated > outdated > all; then the oldest in a failure domain
 *   no longer in Cluster.status.failureDomains, else in PickMost's (most
 *   eligible, then most Machines); new Machines go to PickFewest's failure
 *   domain (fewest up-to-date, then fewest Machines): util/failuredomains;
 * - preflightChecks (scale up and scale down; the Machine being removed is
 *   excluded): no Machine being deleted, every Machine has a nodeRef, healthy
 *   control plane components, healthy etcd members;
 * - cloneConfigsAndGenerateMachine: HCSMachine cloned from
 *   machineTemplate.infrastructureRef and a KubeadmConfig (init or control plane
 *   join), both named like the Machine and owned by the KCP until the Machine
 *   adopts them; labels cluster-name, control-plane, control-plane-name;
 *   annotation kubeadm-cluster-configuration;
 * - status replicas / updatedReplicas / readyReplicas / unavailableReplicas /
 *   initialized / ready / version (lowest Machine version), conditions.
 *
 * Testbed model of etcd (stacked etcd, one member per control plane Machine):
 * a member joins when the Machine's Node first becomes Ready, and is removed by
 * the KCP before it deletes the Machine (RemoveEtcdMemberForMachine). A member
 * is down when its Node is not Ready or it is named in the testbed fault
 * annotation `testbed.hcs/etcd-member-unhealthy` (etcd-faults.ts: the same
 * fault model the served etcd of `--capi upstream` follows). Quorum = more
 * than half of the members up. Without it, as KCP v1.10.10 sees a real etcd
 * (workload_cluster_conditions.go getCurrentEtcdMembersAndAlarms: the member
 * it reaches reports `etcdserver: no leader` in its Status), every Machine
 * with a Node gets EtcdMemberHealthy False, EtcdClusterHealthy is False
 * (EtcdClusterUnhealthy), and the preflight checks refuse every scale
 * operation, a rollback included (KCP-5), with the Warning Event
 * ControlPlaneUnhealthy. The operator hint (Warning EtcdQuorumLost) and the
 * forced recovery (`testbed.hcs/restore-etcd-quorum: "true"`: the down members
 * are dropped and re-join as new members) are the testbed etcd's, not KCP's.
 * A skipped Kubernetes minor in spec.version is refused (UPG-3): condition
 * VersionUpgradeAllowed False, a Warning event, no rollout.
 * The CoreDNS and etcd image tags actually deployed are recorded in the
 * workload cluster's ConfigMap kube-system/testbed-control-plane (KCP-3).
 */
import { BOOTSTRAP_VERSION, CAPI_VERSION, CONTROL_PLANE_CONFIGMAP, LABEL_CLUSTER_NAME, LABEL_CONTROL_PLANE, ANNOTATION_CLONED_FROM_GROUPKIND, ANNOTATION_CLONED_FROM_NAME, ANNOTATION_DELETE_MACHINE } from '../../product/api/capi.js';
import type { Cluster, Condition, KubeadmConfig, KubeadmConfigSpec, KubeadmControlPlane, KubeadmControlPlaneStatus, Machine } from '../../product/api/capi.js';
import type { Node } from '../../product/api/core.js';
import { nodeReady } from '../../product/api/core.js';
import { INFRA_VERSION } from '../../product/api/hcs.js';
import type { KubeClient } from '../../core/kube/client.js';
import type { KubeObject } from '../../core/kube/types.js';
import { controllerOf, isDeleting, ownerRef } from '../../core/kube/types.js';
import type { Controller, Result } from '../../core/runtime/manager.js';
import type { ControllerContext, Logger } from '../../core/runtime/context.js';
import type { Rng } from '../../core/rng.js';
import { pickFewestFailureDomain, pickMostFailureDomain } from './failure-domains.js';
import { writeKubeadmConfig } from './kubeadm-config.js';
import { reconcileCertificateExpiries } from './kcp-certificates.js';
import { kubeconfigSecretName, reconcileKubeconfigSecret } from './kubeconfig.js';
import { canonicalJson, generatedName, mustFormatLabelValue, sameJson, groupOf, keyFor, markFalse, markTrue, setCondition, splitKey } from './util.js';
import { ANN_ETCD_MEMBER_UNHEALTHY, ANN_RESTORE_ETCD_QUORUM, ETCD_NO_LEADER, endpointErrorsMessage, etcdFaultsOf, hasQuorum, reportQuorumLost, reportQuorumRestored } from './etcd-faults.js';

export const KCP_CONTROLLER = 'capi-kubeadmcontrolplane';
export const KCP_DEPLOYMENT = 'capi-kubeadm-control-plane-controller-manager';
/** Upstream MachineControlPlaneNameLabel. */
export const LABEL_CONTROL_PLANE_NAME = 'cluster.x-k8s.io/control-plane-name';
/** Upstream KubeadmClusterConfigurationAnnotation. */
export const ANN_KUBEADM_CLUSTER_CONFIGURATION = 'controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration';
export { ANN_RESTORE_ETCD_QUORUM, ANN_ETCD_MEMBER_UNHEALTHY } from './etcd-faults.js';
/** Testbed fault: comma-separated control plane Machine names (or their Node names) whose API server / controller manager / scheduler are unhealthy. */
export const ANN_CONTROL_PLANE_COMPONENTS_UNHEALTHY = 'testbed.hcs/control-plane-components-unhealthy';
export { CONTROL_PLANE_CONFIGMAP } from '../../product/api/capi.js';

/** Upstream requeue intervals (controlplane/kubeadm/internal/controllers/controller.go). */
export const PREFLIGHT_FAILED_REQUEUE_MS = 15_000;
export const DELETE_REQUEUE_MS = 30_000;

// ---- pure decision ------------------------------------------------------------

export interface KcpMachineView {
  name: string;
  /** creationTimestamp (ms). */
  created: number;
  failureDomain?: string;
  upToDate: boolean;
  deleting: boolean;
  hasNodeRef: boolean;
  deleteAnnotation: boolean;
  /** API server, controller manager and scheduler healthy. */
  componentsHealthy: boolean;
  /** undefined: not an etcd member (yet). */
  etcdMemberHealthy?: boolean;
  /** Why EtcdMemberHealthy is not True (KCP's condition message), and whether it is Unknown rather than False. */
  etcdMessage?: string;
  etcdUnknown?: boolean;
}

export interface KcpDecisionInput {
  replicas: number;
  maxSurge: number;
  initialized: boolean;
  machines: KcpMachineView[];
  /** The Cluster's status.failureDomains with controlPlane true (sorted); none: no failure domains. */
  failureDomains?: readonly string[];
}

export type KcpAction =
  | { type: 'none' }
  | { type: 'initialize' }
  | { type: 'scaleUp'; reason: string }
  | { type: 'scaleDown'; machine: string; reason: string }
  | { type: 'blocked'; operation: 'scaleUp' | 'scaleDown'; reason: 'WaitingForMachineDeletion' | 'PreflightFailed'; messages: string[]; machine?: string };

export function etcdHasQuorum(etcd: { members: number; healthy: number }): boolean {
  return hasQuorum(etcd.healthy, etcd.members);
}

/** k8s.io/apimachinery util/errors Aggregate.Error(): one message as is, several as "[a, b]" (duplicates once). */
export function aggregateMessage(msgs: string[]): string {
  const uniq = [...new Set(msgs)];
  return uniq.length === 1 ? uniq[0]! : `[${uniq.join(', ')}]`;
}

function oldest(ms: KcpMachineView[]): KcpMachineView | undefined {
  return [...ms].sort((a, b) => (a.created !== b.created ? a.created - b.created : a.name < b.name ? -1 : 1))[0];
}

/**
 * selectMachineForScaleDown + ControlPlane.MachineInFailureDomainWithMostMachines / FailureDomainWithMostMachines
 * (controlplane/kubeadm/internal/control_plane.go, cluster-api v1.10): among the candidates, the oldest of a failure
 * domain no longer in the Cluster's control plane failure domains (or none) if there is one, else of PickMost.
 */
export function selectMachineForScaleDown(all: KcpMachineView[], outdated: KcpMachineView[], controlPlaneFailureDomains: readonly string[] = []): KcpMachineView | undefined {
  // collections.HasUnhealthyControlPlaneComponents: a component or etcd member condition False. A Machine without a
  // Node has none of them set (KCP v1.10 UpdateStaticPodConditions / updateManagedEtcdConditions set only the v1beta2
  // ones, Unknown, for provisioning Machines: "The machine without a node ... do not treat it as unhealthy"), so it is
  // not unhealthy here; the preflight checks still wait for its Node.
  const unhealthy = (m: KcpMachineView): boolean => m.hasNodeRef && (!m.componentsHealthy || m.etcdMemberHealthy === false);
  let candidates = all;
  if (outdated.some((m) => m.deleteAnnotation)) candidates = outdated.filter((m) => m.deleteAnnotation);
  else if (all.some((m) => m.deleteAnnotation)) candidates = all.filter((m) => m.deleteAnnotation);
  else if (outdated.some(unhealthy)) candidates = outdated.filter(unhealthy);
  else if (outdated.length > 0) candidates = outdated;
  if (candidates.length === 0) return undefined;
  const notIn = candidates.filter((m) => !m.failureDomain || !controlPlaneFailureDomains.includes(m.failureDomain));
  const fd = notIn.length ? oldest(notIn)!.failureDomain : pickMostFailureDomain(controlPlaneFailureDomains, all, candidates);
  return oldest(candidates.filter((m) => m.failureDomain === fd));
}

/** preflightChecks; `exclude` is the Machine a scale down removes. */
export function preflightChecks(machines: KcpMachineView[], exclude?: string): { ok: true } | { ok: false; reason: 'WaitingForMachineDeletion' | 'PreflightFailed'; messages: string[] } {
  if (machines.length === 0) return { ok: true };
  const deleting = machines.filter((m) => m.deleting).map((m) => m.name);
  if (deleting.length) return { ok: false, reason: 'WaitingForMachineDeletion', messages: [`Waiting for machines to be deleted: ${deleting.join(', ')}`] };
  const msgs: string[] = [];
  for (const m of machines) {
    if (m.name === exclude) continue;
    if (!m.hasNodeRef) {
      msgs.push(`Machine ${m.name} does not have a corresponding Node yet (Machine.status.nodeRef not set)`);
      continue;
    }
    if (!m.componentsHealthy) msgs.push(`Machine ${m.name} reports APIServerPodHealthy, ControllerManagerPodHealthy or SchedulerPodHealthy condition is false`);
    // scale.go preflightCheckCondition: "%s %s reports %s condition is false (%s, %s)" (severity, message) / "is unknown (%s)".
    if (m.etcdMemberHealthy === false) {
      if (m.etcdUnknown) msgs.push(`Machine ${m.name} reports EtcdMemberHealthy condition is unknown (${m.etcdMessage ?? ''})`);
      else msgs.push(`Machine ${m.name} reports EtcdMemberHealthy condition is false${m.etcdMessage ? ` (Error, ${m.etcdMessage})` : ''}`);
    }
  }
  return msgs.length ? { ok: false, reason: 'PreflightFailed', messages: msgs } : { ok: true };
}

/** One reconcile's decision: what the KCP would do next. */
export function decideKcp(input: KcpDecisionInput): KcpAction {
  const ms = input.machines;
  const outdated = ms.filter((m) => !m.upToDate);
  // Without etcd quorum KCP v1.10.10 has no quorum check of its own: the Machines' EtcdMemberHealthy conditions
  // (all False then, see the views) fail the preflight checks (scale.go).
  const scaleUp = (reason: string): KcpAction => {
    const pf = preflightChecks(ms);
    if (!pf.ok) return { type: 'blocked', operation: 'scaleUp', reason: pf.reason, messages: pf.messages };
    return { type: 'scaleUp', reason };
  };
  const scaleDown = (pool: KcpMachineView[], reason: string): KcpAction => {
    const victim = selectMachineForScaleDown(ms, pool, input.failureDomains ?? []);
    if (!victim) return { type: 'none' };
    const pf = preflightChecks(ms, victim.name);
    if (!pf.ok) return { type: 'blocked', operation: 'scaleDown', reason: pf.reason, messages: pf.messages, machine: victim.name };
    return { type: 'scaleDown', machine: victim.name, reason };
  };
  if (outdated.length > 0) {
    const max = input.replicas + input.maxSurge;
    if (ms.length < max) return scaleUp(`rolling out: ${ms.length} machines < ${input.replicas} replicas + ${input.maxSurge} maxSurge`);
    return scaleDown(outdated, `rolling out: ${outdated.length} outdated machine(s), ${ms.length} machines >= ${input.replicas} replicas + ${input.maxSurge} maxSurge`);
  }
  if (ms.length === 0 && input.replicas > 0 && !input.initialized) return { type: 'initialize' };
  if (ms.length < input.replicas) return scaleUp(`${ms.length} machines < ${input.replicas} replicas`);
  if (ms.length > input.replicas) return scaleDown([], `${ms.length} machines > ${input.replicas} replicas`);
  return { type: 'none' };
}

// ---- versions (UPG-3) -----------------------------------------------------------

export function parseVersion(v: string | undefined): { major: number; minor: number; patch: number } | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec((v ?? '').trim());
  return m ? { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3] ?? 0) } : undefined;
}

export function compareVersions(a: string, b: string): number {
  const x = parseVersion(a);
  const y = parseVersion(b);
  if (!x || !y) return a < b ? -1 : a > b ? 1 : 0;
  return x.major - y.major || x.minor - y.minor || x.patch - y.patch;
}

/** The reason an upgrade from `from` to `to` skips a minor version (kubeadm / KCP webhook version skew), or undefined. */
export function minorSkipError(from: string | undefined, to: string | undefined): string | undefined {
  const f = parseVersion(from);
  const t = parseVersion(to);
  if (!f || !t) return undefined;
  if (t.major > f.major || (t.major === f.major && t.minor > f.minor + 1)) {
    return `cannot update Kubernetes version from ${from} to ${to}: skipping Kubernetes minor versions is not supported; upgrade to v${f.major}.${f.minor + 1}.x first (with the intermediate Core and VM images)`;
  }
  return undefined;
}

// ---- etcd / control plane record (workload cluster ConfigMap) ----------------------

export interface EtcdMemberRecord {
  /** Machine name. */
  name: string;
  node: string;
  imageTag: string;
  version: string;
}

export interface ControlPlaneRecord {
  kubernetesVersion: string;
  dnsImageTag: string;
  members: EtcdMemberRecord[];
  /** etcdQuorum as last written (undefined: never written). */
  quorum?: boolean;
}

function splitList(v: string | undefined): Set<string> {
  return new Set((v ?? '').split(',').map((x) => x.trim()).filter(Boolean));
}

function clusterConfigurationOf(spec: KubeadmConfigSpec): string {
  return canonicalJson(spec.clusterConfiguration ?? {});
}

function normVersion(v: string | undefined): string {
  return v && !v.startsWith('v') ? `v${v}` : v ?? '';
}

// ---- controller -------------------------------------------------------------------------

export class KubeadmControlPlaneReconciler implements Controller {
  readonly name = KCP_CONTROLLER;
  private readonly log: Logger;
  /** Serial numbers of the kubeconfig client certificates (a fork: the run's other random names stay as they were). */
  private readonly kubeconfigRng: Rng;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logs.logger(KCP_DEPLOYMENT, 'kubeadmcontrolplane');
    this.kubeconfigRng = ctx.rng.fork('kcp-kubeconfig');
  }

  async reconcile(key: string): Promise<Result | void> {
    const { namespace, name } = splitKey(key);
    const kcp = await this.ctx.mgmt.get<KubeadmControlPlane>({ kind: 'KubeadmControlPlane', namespace, name });
    if (!kcp) return;
    const clusterName = kcp.metadata.labels?.[LABEL_CLUSTER_NAME] ?? kcp.metadata.ownerReferences?.find((r) => r.kind === 'Cluster')?.name;
    if (!clusterName) return; // wait for the Cluster controller to set the owner reference / label
    const cluster = await this.ctx.mgmt.get<Cluster>({ kind: 'Cluster', namespace, name: clusterName });
    if (!cluster || cluster.spec.paused) return;
    if (isDeleting(kcp)) return this.reconcileDelete(kcp);

    const now = this.ctx.clock.now();
    // reconcileKubeconfig: the <cluster>-kubeconfig Secret once the Cluster has an endpoint (src/world/capi/kubeconfig.ts).
    await this.kubeconfig(kcp, cluster, now);
    const wl = this.ctx.workloads.client(namespace, clusterName);
    const machines = (await this.ctx.mgmt.list<Machine>('Machine', { namespace, labelSelector: { [LABEL_CLUSTER_NAME]: clusterName, [LABEL_CONTROL_PLANE_NAME]: mustFormatLabelValue(name) } })).filter(
      (m) => controllerOf(m)?.uid === kcp.metadata.uid,
    );
    const nodes = new Map((await wl.list<Node>('Node')).map((n) => [n.metadata.name, n]));
    const nodeOf = (m: Machine): Node | undefined => (m.status?.nodeRef ? nodes.get(m.status.nodeRef.name) : undefined);
    let record = await this.readRecord(wl, kcp);

    // The testbed etcd's faults (etcd-faults.ts; not a KCP behaviour): members named in the annotation are down.
    const faults = etcdFaultsOf(kcp.metadata.annotations);
    const unhealthyAnn = faults.down;
    if (faults.restore) {
      // Operator action (KCP-5), forced recovery: the down members are dropped; they re-join as new members below.
      const byName = new Map(machines.map((m) => [m.metadata.name, m]));
      const keep = record.members.filter((mem) => {
        const m = byName.get(mem.name);
        const n = m ? nodeOf(m) : undefined;
        return !!m && !unhealthyAnn.has(mem.name) && !unhealthyAnn.has(mem.node) && !!n && nodeReady(n);
      });
      const dropped = record.members.filter((x) => !keep.includes(x));
      record = { ...record, members: keep };
      await this.writeRecord(wl, kcp, record, true);
      const fresh = (await this.ctx.mgmt.get<KubeadmControlPlane>({ kind: 'KubeadmControlPlane', namespace, name }))!;
      const ann = { ...(fresh.metadata.annotations ?? {}) };
      delete ann[ANN_RESTORE_ETCD_QUORUM];
      delete ann[ANN_ETCD_MEMBER_UNHEALTHY];
      await this.ctx.mgmt.update({ ...fresh, metadata: { ...fresh.metadata, annotations: ann } });
      const recreated = dropped.map((x) => x.node).sort();
      await reportQuorumRestored(this.ctx, kcp, recreated);
      return; // the annotation update brings us back
    }

    // Machines' views.
    const infra = new Map<string, KubeObject>();
    for (const m of machines) {
      const ir = m.spec.infrastructureRef;
      if (!ir.kind) continue;
      const o = await this.ctx.mgmt.get<KubeObject>({ kind: ir.kind, namespace: ir.namespace ?? namespace, name: ir.name });
      if (o) infra.set(m.metadata.name, o);
    }
    const componentsUnhealthy = splitList(kcp.metadata.annotations?.[ANN_CONTROL_PLANE_COMPONENTS_UNHEALTHY]);
    // The knobs name a Machine, or its Node (the pool hostname: stable across replacements, so scenarios can use it).
    const listed = (set: Set<string>, m: Machine): boolean => set.has(m.metadata.name) || (!!m.status?.nodeRef && set.has(m.status.nodeRef.name));
    const memberNames = new Set(record.members.map((x) => x.name));
    const wantCC = clusterConfigurationOf(kcp.spec.kubeadmConfigSpec);
    const wantVersion = normVersion(kcp.spec.version);
    const outdatedWhy = new Map<string, string>();
    const views: KcpMachineView[] = machines.map((m) => {
      const n = nodeOf(m);
      const ready = !!n && nodeReady(n);
      const why: string[] = [];
      if (normVersion(m.spec.version) !== wantVersion) why.push(`version ${m.spec.version}, ${wantVersion} required`);
      const clonedFrom = infra.get(m.metadata.name)?.metadata.annotations?.[ANNOTATION_CLONED_FROM_NAME];
      const tplRef = kcp.spec.machineTemplate.infrastructureRef;
      if (clonedFrom !== undefined && clonedFrom !== tplRef.name) why.push(`infrastructure template ${clonedFrom}, ${tplRef.name} required`);
      const cc = m.metadata.annotations?.[ANN_KUBEADM_CLUSTER_CONFIGURATION];
      if (cc !== undefined && cc !== wantCC) why.push('clusterConfiguration changed');
      if (why.length) outdatedWhy.set(m.metadata.name, why.join('; '));
      return {
        name: m.metadata.name,
        created: Date.parse(m.metadata.creationTimestamp ?? '') || 0,
        ...(m.spec.failureDomain ? { failureDomain: m.spec.failureDomain } : {}),
        upToDate: why.length === 0,
        deleting: isDeleting(m),
        hasNodeRef: !!m.status?.nodeRef,
        deleteAnnotation: !!m.metadata.annotations && ANNOTATION_DELETE_MACHINE in m.metadata.annotations,
        componentsHealthy: ready && !listed(componentsUnhealthy, m),
        ...(memberNames.has(m.metadata.name) ? { etcdMemberHealthy: ready && !listed(unhealthyAnn, m) } : {}),
      };
    });
    const memberHealthy = (mem: EtcdMemberRecord): boolean => views.find((v) => v.name === mem.name)?.etcdMemberHealthy === true;
    const quorum = etcdHasQuorum({ members: record.members.length, healthy: record.members.filter(memberHealthy).length });
    const upNodes = record.members.filter(memberHealthy).map((mem) => mem.node).sort();
    const downNodes = record.members.filter((mem) => !memberHealthy(mem)).map((mem) => mem.node).sort();
    if (!quorum) {
      // What KCP v1.10.10 reads from an etcd without quorum (workload_cluster_conditions.go getCurrentEtcdMembersAndAlarms):
      // the first member that answers (forFirstAvailableNode; here the first up member by Node name) reports
      // "etcdserver: no leader" in its Status, and every Machine with a Node and no deletionTimestamp gets
      // EtcdMemberHealthy False with that message; none answering: Unknown, "Failed to connect to etcd".
      const allNodes = views.filter((v) => v.hasNodeRef && !v.deleting).map((v) => machines.find((m) => m.metadata.name === v.name)!.status!.nodeRef!.name);
      for (const v of views) {
        if (!v.hasNodeRef || v.deleting) continue;
        v.etcdMemberHealthy = false;
        if (upNodes.length) v.etcdMessage = endpointErrorsMessage(upNodes[0]!, [ETCD_NO_LEADER]);
        else {
          v.etcdUnknown = true;
          v.etcdMessage = `Failed to connect to etcd: could not establish a connection to etcd members hosted on ${allNodes.join(',')}`;
        }
      }
    }
    // The testbed etcd's operator hint (KCP-5), once per loss of quorum: KCP itself names no quorum (etcd-faults.ts).
    if (!quorum && record.quorum !== false && record.members.length > 0) {
      await reportQuorumLost(this.ctx, kcp, upNodes, downNodes, record.members.length);
    }

    // etcd membership: members join when their Node is Ready; members without a Machine leave (only with quorum).
    for (const m of machines) {
      const n = nodeOf(m);
      if (memberNames.has(m.metadata.name) || isDeleting(m) || !n || !nodeReady(n)) continue;
      if (!quorum) continue; // a member cannot join a cluster without quorum
      record.members.push({ name: m.metadata.name, node: n.metadata.name, imageTag: this.etcdTagOf(m), version: normVersion(m.spec.version) });
      memberNames.add(m.metadata.name);
      const v = views.find((x) => x.name === m.metadata.name)!;
      v.etcdMemberHealthy = !listed(unhealthyAnn, m);
      this.ctx.events.record({ source: 'capi', type: 'kcp.etcd-member-added', message: `KubeadmControlPlane ${key}: etcd member ${m.metadata.name} (Node ${n.metadata.name}) joined`, data: { kcp: name, machine: m.metadata.name, node: n.metadata.name } });
    }
    if (quorum) {
      const gone = record.members.filter((mem) => !machines.some((m) => m.metadata.name === mem.name));
      if (gone.length) {
        record.members = record.members.filter((mem) => !gone.includes(mem));
      }
    }
    const initialized = kcp.status?.initialized === true || machines.some((m) => {
      const n = nodeOf(m);
      return !!n && nodeReady(n);
    });
    if (record.kubernetesVersion === '' && initialized) {
      record.kubernetesVersion = wantVersion;
      record.dnsImageTag = kcp.spec.kubeadmConfigSpec.clusterConfiguration?.dns?.imageTag ?? '';
    }

    // The Cluster's control plane failure domains (Cluster.status.failureDomains, copied from the infrastructure cluster).
    const failureDomains = Object.entries(cluster.status?.failureDomains ?? {}).filter(([, f]) => f.controlPlane).map(([id]) => id).sort();
    // NextFailureDomainForScaleUp (initializeControlPlane, scaleUpControlPlane): none without failure domains.
    const placement = (): string | undefined => (failureDomains.length ? pickFewestFailureDomain(failureDomains, views) : undefined);

    // UPG-3: refuse a skipped minor version.
    const currentVersion = machines.map((m) => normVersion(m.spec.version)).filter(Boolean).sort(compareVersions)[0];
    const skip = minorSkipError(currentVersion, wantVersion);

    let action: KcpAction = { type: 'none' };
    if (!skip) {
      action = decideKcp({
        replicas: kcp.spec.replicas ?? 1,
        maxSurge: Math.min(1, Math.max(0, Number(kcp.spec.rolloutStrategy?.rollingUpdate?.maxSurge ?? 1) || 0)),
        initialized,
        machines: views,
        failureDomains,
      });
    }
    // KCP-3: at the start of an upgrade, the kubeadm-config and the CoreDNS deployment get the new values (UpdateCoreDNS).
    if (initialized && outdatedWhy.size > 0 && (record.kubernetesVersion !== wantVersion || record.dnsImageTag !== (kcp.spec.kubeadmConfigSpec.clusterConfiguration?.dns?.imageTag ?? '')) && action.type !== 'blocked' && !skip) {
      const before = `${record.kubernetesVersion}/${record.dnsImageTag}`;
      record.kubernetesVersion = wantVersion;
      record.dnsImageTag = kcp.spec.kubeadmConfigSpec.clusterConfiguration?.dns?.imageTag ?? '';
      this.ctx.events.record({ source: 'capi', type: 'kcp.kubeadm-config-updated', message: `KubeadmControlPlane ${key}: kubeadm-config and CoreDNS updated (${before} -> ${record.kubernetesVersion}/${record.dnsImageTag})`, data: { kcp: name, kubernetesVersion: record.kubernetesVersion, dnsImageTag: record.dnsImageTag }, rules: ['KCP-3'] });
    }

    let result: Result | void = undefined;
    switch (action.type) {
      case 'initialize':
        await this.createMachine(kcp, cluster, true, placement());
        this.decision(kcp, 'initialize', 'creating the first control plane Machine (kubeadm init)');
        break;
      case 'scaleUp':
        await this.createMachine(kcp, cluster, false, placement());
        this.decision(kcp, 'scale-up', action.reason);
        break;
      case 'scaleDown': {
        const victim = machines.find((m) => m.metadata.name === action.machine)!;
        // RemoveEtcdMemberForMachine (needs quorum, checked by decideKcp), then delete the Machine.
        if (memberNames.has(victim.metadata.name)) {
          record.members = record.members.filter((mem) => mem.name !== victim.metadata.name);
            this.ctx.events.record({ source: 'capi', type: 'kcp.etcd-member-removed', message: `KubeadmControlPlane ${key}: etcd member ${victim.metadata.name} removed`, data: { kcp: name, machine: victim.metadata.name } });
        }
        await this.ctx.mgmt.delete({ kind: 'Machine', namespace, name: victim.metadata.name }, { ignoreNotFound: true });
        this.decision(kcp, 'scale-down', `${action.reason}; deleting ${victim.metadata.name}${outdatedWhy.has(victim.metadata.name) ? ` (${outdatedWhy.get(victim.metadata.name)})` : ''}`, { machine: victim.metadata.name });
        await this.ctx.recorder.record('capi', 'kubeadm-control-plane-controller', kcp, 'Normal', 'ScaleDown', `Deleting control plane Machine ${victim.metadata.name}`);
        break;
      }
      case 'blocked': {
        if (action.reason === 'PreflightFailed') {
          // scale.go preflightChecks: the Warning Event with the aggregated errors (upstream records it every reconcile;
          // the model once per distinct message).
          const last = kcp.status?.conditions?.find((c) => c.type === 'Resized')?.message;
          const m2 = `Waiting for control plane to pass preflight checks to continue reconciliation: ${aggregateMessage(action.messages)}`;
          if (last !== m2) await this.ctx.recorder.record('capi', 'kubeadm-control-plane-controller', kcp, 'Warning', 'ControlPlaneUnhealthy', m2, action.messages.some((x) => x.includes('EtcdMemberHealthy')) ? ['KCP-5'] : undefined);
        }
        this.log.info('operation blocked', { kcp: key, reason: action.reason, messages: action.messages });
        result = { requeueAfter: action.reason === 'WaitingForMachineDeletion' ? DELETE_REQUEUE_MS : PREFLIGHT_FAILED_REQUEUE_MS };
        break;
      }
      case 'none':
        break;
    }
    if (skip && kcp.status?.conditions?.find((c) => c.type === 'VersionUpgradeAllowed')?.message !== `UPG-3: ${skip}`) {
      await this.ctx.recorder.record('capi', 'kubeadm-control-plane-controller', kcp, 'Warning', 'VersionSkewTooLarge', `UPG-3: ${skip}`, ['UPG-3']);
      this.ctx.events.record({ source: 'capi', type: 'kcp.version-refused', message: `KubeadmControlPlane ${key}: UPG-3: ${skip}`, data: { kcp: name, from: currentVersion, to: wantVersion }, rules: ['UPG-3'] });
    }

    // writeRecord only writes when the data differs.
    await this.writeRecord(wl, kcp, record, etcdHasQuorum({ members: record.members.length, healthy: record.members.filter(memberHealthy).length }));
    await writeKubeadmConfig(wl, cluster, kcp, record.kubernetesVersion, record.dnsImageTag);
    // controller.go reconcile's last step on a steady control plane: the certificates-expiry annotations (kcp-certificates.ts).
    if (action.type === 'none' && initialized && !skip && outdatedWhy.size === 0 && machines.length === (kcp.spec.replicas ?? 1)) await reconcileCertificateExpiries(this.ctx.mgmt, wl, machines);

    // Status.
    const after = (await this.ctx.mgmt.list<Machine>('Machine', { namespace, labelSelector: { [LABEL_CLUSTER_NAME]: clusterName, [LABEL_CONTROL_PLANE_NAME]: mustFormatLabelValue(name) } })).filter((m) => controllerOf(m)?.uid === kcp.metadata.uid);
    const readyCount = after.filter((m) => {
      const n = nodeOf(m);
      return !!n && nodeReady(n) && !isDeleting(m);
    }).length;
    const upToDate = after.filter((m) => views.find((v) => v.name === m.metadata.name)?.upToDate ?? true).length;
    const status: KubeadmControlPlaneStatus = structuredClone(kcp.status ?? {});
    status.selector = `${LABEL_CLUSTER_NAME}=${clusterName},${LABEL_CONTROL_PLANE}`;
    status.replicas = after.length;
    status.updatedReplicas = upToDate;
    status.readyReplicas = readyCount;
    status.unavailableReplicas = after.length - readyCount;
    status.initialized = initialized;
    status.ready = readyCount > 0;
    const lowest = after.map((m) => normVersion(m.spec.version)).filter(Boolean).sort(compareVersions)[0];
    if (lowest) status.version = lowest;
    status.observedGeneration = kcp.metadata.generation;
    status.conditions = this.conditions(kcp, status, { action, outdated: outdatedWhy, members: record.members.length, healthy: record.members.filter(memberHealthy).length, etcd: views, skip, componentsUnhealthy: views.filter((v) => !v.componentsHealthy && v.hasNodeRef).map((v) => v.name), now });
    if (!sameJson(status, kcp.status ?? {})) {
      await this.ctx.mgmt.updateStatus<KubeadmControlPlane>({ ...kcp, status });
    }
    if (result) return result;
    // Wait for Machines to come up (Machine watch is the main trigger; this is the safety net).
    if (readyCount !== (kcp.spec.replicas ?? 1) || outdatedWhy.size > 0) return { requeueAfter: PREFLIGHT_FAILED_REQUEUE_MS };
  }

  private conditions(
    kcp: KubeadmControlPlane,
    st: KubeadmControlPlaneStatus,
    x: { action: KcpAction; outdated: Map<string, string>; members: number; healthy: number; etcd: KcpMachineView[]; skip: string | undefined; componentsUnhealthy: string[]; now: number },
  ): Condition[] {
    let c = st.conditions;
    const now = x.now;
    const replicas = kcp.spec.replicas ?? 1;
    c = st.initialized ? markTrue(c, 'Available', now) : markFalse(c, 'Available', 'WaitingForKubeadmInit', 'Info', 'waiting for the first control plane Machine to run kubeadm init', now);
    c = x.outdated.size === 0
      ? markTrue(c, 'MachinesSpecUpToDate', now)
      : markFalse(c, 'MachinesSpecUpToDate', 'RollingUpdateInProgress', 'Warning', `Rolling ${x.outdated.size} replicas with outdated spec (${[...x.outdated].map(([m, w]) => `${m}: ${w}`).join('; ')})`, now);
    if (x.action.type === 'blocked') {
      c = markFalse(c, 'Resized', x.action.reason === 'WaitingForMachineDeletion' ? 'WaitingForMachineDeletion' : 'PreflightChecksFailed', 'Warning', `Waiting for control plane to pass preflight checks to continue reconciliation: ${aggregateMessage(x.action.messages)}`, now);
    } else if ((st.replicas ?? 0) < replicas) {
      c = markFalse(c, 'Resized', 'ScalingUp', 'Warning', `Scaling up control plane to ${replicas} replicas (actual ${st.replicas ?? 0})`, now);
    } else if ((st.replicas ?? 0) > replicas) {
      c = markFalse(c, 'Resized', 'ScalingDown', 'Warning', `Scaling down control plane to ${replicas} replicas (actual ${st.replicas ?? 0})`, now);
    } else {
      c = markTrue(c, 'Resized', now);
    }
    c = x.componentsUnhealthy.length === 0
      ? markTrue(c, 'ControlPlaneComponentsHealthy', now)
      : markFalse(c, 'ControlPlaneComponentsHealthy', 'ControlPlaneComponentsUnhealthy', 'Error', `Following machines are reporting control plane errors: ${x.componentsUnhealthy.join(', ')}`, now);
    // workload_cluster_conditions.go aggregateConditionsFromMachinesToKCP (v1beta1 EtcdClusterHealthy): Machines whose
    // EtcdMemberHealthy is False (severity Error) → False EtcdClusterUnhealthy; only Unknown ones → Unknown EtcdClusterUnknown.
    const etcdErrors = x.etcd.filter((v) => v.etcdMemberHealthy === false && !v.etcdUnknown).map((v) => v.name).sort();
    const etcdUnknown = x.etcd.filter((v) => v.etcdMemberHealthy === false && v.etcdUnknown).map((v) => v.name).sort();
    if (etcdErrors.length) {
      c = markFalse(c, 'EtcdClusterHealthy', 'EtcdClusterUnhealthy', 'Error', `Following Machines are reporting etcd member errors: ${etcdErrors.join(', ')}`, now);
    } else if (etcdUnknown.length && x.etcd.every((v) => v.etcdMemberHealthy !== true)) {
      c = setCondition(c, { type: 'EtcdClusterHealthy', status: 'Unknown', reason: 'EtcdClusterUnknown', message: `Following Machines are reporting unknown etcd member status: ${etcdUnknown.join(', ')}` }, now);
    } else if (x.healthy < x.members) {
      c = markFalse(c, 'EtcdClusterHealthy', 'EtcdClusterUnhealthy', 'Warning', `${x.healthy}/${x.members} etcd members healthy`, now);
    } else {
      c = markTrue(c, 'EtcdClusterHealthy', now);
    }
    c = x.skip
      ? markFalse(c, 'VersionUpgradeAllowed', 'VersionSkewTooLarge', 'Error', `UPG-3: ${x.skip}`, now)
      : markTrue(c, 'VersionUpgradeAllowed', now);
    const bad = c.filter((k) => k.type !== 'Ready' && k.status === 'False');
    const first = bad.find((k) => k.severity === 'Error') ?? bad[0];
    c = first ? markFalse(c, 'Ready', first.reason ?? 'NotReady', first.severity === 'Error' ? 'Error' : 'Warning', first.message ?? '', now) : markTrue(c, 'Ready', now);
    return c;
  }

  private async kubeconfig(kcp: KubeadmControlPlane, cluster: Cluster, now: number): Promise<void> {
    const r = await reconcileKubeconfigSecret(this.ctx.mgmt, this.ctx.workloads, cluster, ownerRef(kcp), this.kubeconfigRng, now);
    if (r === 'created' || r === 'updated') this.log.info(`kubeconfig Secret ${kubeconfigSecretName(cluster.metadata.name)} ${r}`, { kcp: keyFor(kcp), secret: kubeconfigSecretName(cluster.metadata.name) });
  }

  private decision(kcp: KubeadmControlPlane, type: string, message: string, data: Record<string, unknown> = {}): void {
    this.ctx.events.record({ source: 'capi', type: `kcp.${type}`, message: `KubeadmControlPlane ${keyFor(kcp)}: ${message}`, data: { kcp: kcp.metadata.name, ...data }, rules: ['KCP-1', 'KCP-2'] });
    this.log.info(message, { kcp: keyFor(kcp), decision: type });
  }

  private etcdTagOf(m: Machine): string {
    try {
      const cc = JSON.parse(m.metadata.annotations?.[ANN_KUBEADM_CLUSTER_CONFIGURATION] ?? '{}') as KubeadmConfigSpec['clusterConfiguration'];
      return cc?.etcd?.local?.imageTag ?? '';
    } catch {
      return '';
    }
  }

  private async readRecord(wl: KubeClient, kcp: KubeadmControlPlane): Promise<ControlPlaneRecord> {
    const cm = await wl.get<KubeObject & { data?: Record<string, string> }>({ kind: 'ConfigMap', ...CONTROL_PLANE_CONFIGMAP });
    if (!cm?.data || cm.data.controlPlaneName !== kcp.metadata.name) return { kubernetesVersion: '', dnsImageTag: '', members: [] };
    let members: EtcdMemberRecord[] = [];
    try {
      members = JSON.parse(cm.data.etcdMembers ?? '[]') as EtcdMemberRecord[];
    } catch {
      members = [];
    }
    return { kubernetesVersion: cm.data.kubernetesVersion ?? '', dnsImageTag: cm.data.dnsImageTag ?? '', members, ...(cm.data.etcdQuorum ? { quorum: cm.data.etcdQuorum === 'true' } : {}) };
  }

  private async writeRecord(wl: KubeClient, kcp: KubeadmControlPlane, r: ControlPlaneRecord, quorum: boolean): Promise<void> {
    const data: Record<string, string> = {
      controlPlaneName: kcp.metadata.name,
      kubernetesVersion: r.kubernetesVersion,
      dnsImageTag: r.dnsImageTag,
      etcdImageTags: [...new Set(r.members.map((m) => m.imageTag))].sort().join(','),
      etcdMembers: JSON.stringify(r.members),
      etcdQuorum: String(quorum),
    };
    const ref = { kind: 'ConfigMap', ...CONTROL_PLANE_CONFIGMAP };
    const cur = await wl.get<KubeObject & { data?: Record<string, string> }>(ref);
    if (!cur) {
      await wl.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...CONTROL_PLANE_CONFIGMAP, labels: { 'app.kubernetes.io/managed-by': 'hcs-testbed' } }, data } as KubeObject);
    } else if (!sameJson(cur.data ?? {}, data)) {
      await wl.update({ ...cur, data } as KubeObject);
    }
  }

  /** cloneConfigsAndGenerateMachine. */
  private async createMachine(kcp: KubeadmControlPlane, cluster: Cluster, init: boolean, failureDomain: string | undefined): Promise<void> {
    const namespace = kcp.metadata.namespace ?? 'default';
    const clusterName = cluster.metadata.name;
    const name = generatedName(kcp.metadata.name, this.ctx.rng.string(5));
    const labels: Record<string, string> = { ...(kcp.spec.machineTemplate.metadata?.labels ?? {}), [LABEL_CLUSTER_NAME]: clusterName, [LABEL_CONTROL_PLANE]: '', [LABEL_CONTROL_PLANE_NAME]: mustFormatLabelValue(kcp.metadata.name) };
    const kcpRef = { ...ownerRef(kcp), controller: false, blockOwnerDeletion: true };
    const tplRef = kcp.spec.machineTemplate.infrastructureRef;
    const template = await this.ctx.mgmt.get<KubeObject & { spec?: { template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: unknown } } }>({
      kind: tplRef.kind ?? 'HCSMachineTemplate',
      namespace: tplRef.namespace ?? namespace,
      name: tplRef.name,
    });
    if (!template) {
      const msg = `${tplRef.kind ?? 'HCSMachineTemplate'} ${tplRef.name} not found: cannot create control plane Machines until it exists (RB-3)`;
      await this.ctx.recorder.record('capi', 'kubeadm-control-plane-controller', kcp, 'Warning', init ? 'FailedInitialization' : 'FailedScaleUp', msg, ['RB-3']);
      throw new Error(msg);
    }
    const infraApiVersion = tplRef.apiVersion ?? template.apiVersion ?? INFRA_VERSION;
    const created: KubeObject[] = [];
    try {
      const inner = template.spec?.template ?? {};
      created.push(
        await this.ctx.mgmt.create<KubeObject>({
          apiVersion: infraApiVersion,
          kind: (tplRef.kind ?? 'HCSMachineTemplate').replace(/Template$/, ''),
          metadata: {
            name,
            namespace,
            labels: { ...(inner.metadata?.labels ?? {}), ...labels },
            annotations: { ...(inner.metadata?.annotations ?? {}), [ANNOTATION_CLONED_FROM_NAME]: tplRef.name, [ANNOTATION_CLONED_FROM_GROUPKIND]: `${tplRef.kind ?? 'HCSMachineTemplate'}.${groupOf(infraApiVersion)}` },
            ownerReferences: [kcpRef],
          },
          spec: structuredClone(inner.spec ?? {}),
        }),
      );
      const spec = structuredClone(kcp.spec.kubeadmConfigSpec);
      if (init) {
        delete spec.joinConfiguration;
        spec.initConfiguration = spec.initConfiguration ?? {};
      } else {
        delete spec.initConfiguration;
        delete spec.clusterConfiguration;
        spec.joinConfiguration = { ...(spec.joinConfiguration ?? {}), controlPlane: { ...(spec.joinConfiguration?.controlPlane ?? {}) } };
      }
      created.push(
        await this.ctx.mgmt.create<KubeadmConfig>({
          apiVersion: BOOTSTRAP_VERSION,
          kind: 'KubeadmConfig',
          metadata: { name, namespace, labels: { ...labels }, ownerReferences: [kcpRef] },
          spec,
        }),
      );
      const machine: Machine = {
        apiVersion: CAPI_VERSION,
        kind: 'Machine',
        metadata: {
          name,
          namespace,
          labels,
          annotations: { ...(kcp.spec.machineTemplate.metadata?.annotations ?? {}), [ANN_KUBEADM_CLUSTER_CONFIGURATION]: clusterConfigurationOf(kcp.spec.kubeadmConfigSpec) },
          ownerReferences: [ownerRef(kcp)],
        },
        spec: {
          clusterName,
          version: normVersion(kcp.spec.version),
          bootstrap: { configRef: { apiVersion: BOOTSTRAP_VERSION, kind: 'KubeadmConfig', name, namespace } },
          infrastructureRef: { apiVersion: infraApiVersion, kind: (tplRef.kind ?? 'HCSMachineTemplate').replace(/Template$/, ''), name, namespace },
          ...(failureDomain ? { failureDomain } : {}),
          ...(kcp.spec.machineTemplate.nodeDrainTimeout ? { nodeDrainTimeout: kcp.spec.machineTemplate.nodeDrainTimeout } : {}),
          ...(kcp.spec.machineTemplate.nodeDeletionTimeout ? { nodeDeletionTimeout: kcp.spec.machineTemplate.nodeDeletionTimeout } : {}),
        },
      };
      await this.ctx.mgmt.create(machine);
    } catch (e) {
      for (const o of created) await this.ctx.mgmt.delete({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name }, { ignoreNotFound: true });
      throw e;
    }
    this.ctx.events.record({
      source: 'capi',
      type: 'kcp.machine-created',
      message: `KubeadmControlPlane ${keyFor(kcp)} created ${init ? 'initial ' : ''}control plane Machine ${name} (${normVersion(kcp.spec.version)}, ${tplRef.name}${failureDomain ? `, failure domain ${failureDomain}` : ''})`,
      data: { kcp: kcp.metadata.name, machine: name, init, version: normVersion(kcp.spec.version), template: tplRef.name, ...(failureDomain ? { failureDomain } : {}) },
    });
    await this.ctx.recorder.record('capi', 'kubeadm-control-plane-controller', kcp, 'Normal', init ? 'Initialization' : 'ScaleUp', `Created control plane Machine ${name}`);
  }

  /** reconcileDelete: delete every control plane Machine, then drop the finalizer-free object (no finalizer is modelled). */
  private async reconcileDelete(kcp: KubeadmControlPlane): Promise<Result | void> {
    const namespace = kcp.metadata.namespace ?? 'default';
    const machines = (await this.ctx.mgmt.list<Machine>('Machine', { namespace, labelSelector: { [LABEL_CONTROL_PLANE_NAME]: mustFormatLabelValue(kcp.metadata.name) } })).filter((m) => controllerOf(m)?.uid === kcp.metadata.uid);
    for (const m of machines) if (!isDeleting(m)) await this.ctx.mgmt.delete({ kind: 'Machine', namespace, name: m.metadata.name }, { ignoreNotFound: true });
    if (machines.length) return { requeueAfter: DELETE_REQUEUE_MS };
  }
}

export function setupKubeadmControlPlaneController(ctx: ControllerContext): KubeadmControlPlaneReconciler {
  const r = new KubeadmControlPlaneReconciler(ctx);
  ctx.manager.register(r);
  ctx.mgmt.watch<KubeadmControlPlane>('KubeadmControlPlane', (e) => {
    if (e.type !== 'DELETED') ctx.manager.enqueue(KCP_CONTROLLER, keyFor(e.object));
  }, { shared: true });
  ctx.mgmt.watch<Machine>('Machine', (e) => {
    const owner = controllerOf(e.object);
    if (owner?.kind === 'KubeadmControlPlane') ctx.manager.enqueue(KCP_CONTROLLER, `${e.object.metadata.namespace ?? 'default'}/${owner.name}`);
  }, { shared: true });
  // A served endpoint appeared or moved (the HTTP facade): the kubeconfig Secrets follow.
  ctx.workloads.onEndpointsChange?.(() => {
    void ctx.mgmt.list<KubeadmControlPlane>('KubeadmControlPlane').then((all) => {
      for (const k of all) ctx.manager.enqueue(KCP_CONTROLLER, keyFor(k));
    });
  });
  // The Cluster's status (infrastructure ready) and its owner reference on the KCP come from the Cluster controller.
  ctx.mgmt.watch<Cluster>('Cluster', (e) => {
    const ref = e.object.spec?.controlPlaneRef;
    if (ref?.kind === 'KubeadmControlPlane') ctx.manager.enqueue(KCP_CONTROLLER, `${ref.namespace ?? e.object.metadata.namespace ?? 'default'}/${ref.name}`);
  }, { shared: true });
  return r;
}

