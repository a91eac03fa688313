/**
 * Machine controller, modelled on cluster-api
 * internal/controllers/machine/{machine_controller.go,
 * machine_controller_phases.go, machine_controller_noderef.go} (v1beta1):
 * - finalizer machine.cluster.x-k8s.io, cluster-name label;
 * - adopts its bootstrap config and infrastructure machine (controller
 *   ownerReference to the Machine, the MachineSet's clone-time reference removed);
 * - bootstrap: copies KubeadmConfig status.dataSecretName into
 *   spec.bootstrap.dataSecretName (bootstrapReady);
 * - infrastructure: status.ready + spec.providerID → Machine.spec.providerID,
 *   addresses, failureReason/Message;
 * - nodeRef: the workload cluster's Node whose spec.providerID matches;
 * - phases Pending → Provisioning → Provisioned → Running (Failed, Deleting);
 * - deletion (SPEC MD-4): if the Node may be deleted (isDeleteNodeAllowed,
 *   src/world/capi/machine-delete-gate.ts: the Cluster not being deleted, a nodeRef,
 *   and an active control plane Machine or an externally managed control
 *   plane), cordon + drain (nodeDrainTimeout), wait for volumes to detach
 *   (nodeVolumeDetachTimeout); delete the bootstrap config and the
 *   infrastructure machine and wait until the latter is gone; then, again
 *   only if allowed, delete the Node (give up after nodeDeletionTimeout,
 *   default 10s); remove the finalizer. Not allowed: the Node is kept as it
 *   is, only logged (as upstream).
 *
 * Drain: cordon marks the Node unschedulable, then the Node's pods are evicted
 * through the workload cluster as upstream's drain helper does (DaemonSet and
 * mirror pods skipped; src/world/workload/drain.ts, after cluster-api
 * internal/controllers/machine/drain); the ReplicaSets' replacements land on
 * other Nodes. The Node annotation testbed.hcs/drain-blocked: "true" makes the
 * evictions fail (a PodDisruptionBudget that allows none).
 */
import { ANNOTATION_CERTIFICATES_EXPIRY, FINALIZER_MACHINE, LABEL_CLUSTER_NAME, LABEL_CONTROL_PLANE } from '../../product/api/capi.js';
import type { Cluster, Condition, KubeadmConfig, Machine, MachineAddress, MachinePhase, MachineStatus } from '../../product/api/capi.js';
import type { Node } from '../../product/api/core.js';
import { nodeReady } from '../../product/api/core.js';
import { parseDuration, rfc3339 } from '../../core/clock.js';
import { getShared, listShared, type KubeClient } from '../../core/kube/client.js';
import type { KubeObject, ObjectRef } from '../../core/kube/types.js';
import { isDeleting, ownerRef } from '../../core/kube/types.js';
import type { Controller, Result } from '../../core/runtime/manager.js';
import type { ControllerContext, Logger } from '../../core/runtime/context.js';
import { drainNode } from '../workload/drain.js';
import { isDeleteNodeAllowed, type NodeDeleteSkip } from './machine-delete-gate.js';
import { ANN_DRAIN_BLOCKED, ANN_EXCLUDE_NODE_DRAINING, ANN_EXCLUDE_WAIT_FOR_VOLUME_DETACH, CAPI_DEPLOYMENT, sameJson, getCondition, keyFor, markFalse, markTrue, msSince, splitKey } from './util.js';

export const MACHINE_CONTROLLER = 'capi-machine';

/** Upstream defaults: nodeDeletionTimeout 10s (machine webhook); drain / volume detach wait forever when unset. */
export const DEFAULT_NODE_DELETION_TIMEOUT_MS = 10_000;
/** Fallback poll while waiting for a Node to appear (besides the Node watch). */
export const NODE_REF_POLL_MS = 10_000;
const DRAIN_RETRY_MS = 20_000;
const VOLUME_DETACH_RETRY_MS = 5_000;
const INFRA_DELETE_POLL_MS = 30_000;

interface InfraMachine extends KubeObject {
  spec?: { providerID?: string; failureDomain?: string };
  status?: { ready?: boolean; addresses?: MachineAddress[]; failureReason?: string; failureMessage?: string };
}

function durationMs(v: string | undefined, dflt: number): number {
  if (v === undefined || v === '') return dflt;
  return parseDuration(v);
}

export class MachineReconciler implements Controller {
  readonly name = MACHINE_CONTROLLER;
  private readonly log: Logger;
  /** Workload clusters ("ns/name") whose Nodes we watch. */
  private readonly watched = new Set<string>();
  /** "ns/cluster|providerID" -> Machine key. */
  private readonly byProviderID = new Map<string, string>();

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logs.logger(CAPI_DEPLOYMENT, 'machine');
  }

  /**
   * Per workload cluster ("ns/name"): its Nodes by spec.providerID (then by
   * name), kept from the Node watch like an informer's index. Only for
   * clients that can take a synchronous snapshot (the embedded store), so the
   * snapshot and the watch that follows it see every version exactly once;
   * other clients are scanned as before.
   */
  private readonly nodeIndex = new Map<string, NodeIndex>();

  /** The workload cluster's client; subscribes to its Nodes the first time. */
  private workload(namespace: string, clusterName: string): KubeClient {
    const client = this.ctx.workloads.client(namespace, clusterName);
    const ck = `${namespace}/${clusterName}`;
    if (!this.watched.has(ck)) {
      this.watched.add(ck);
      const snapshot = (client as { listSharedSync?: (kind: string) => readonly Readonly<Node>[] }).listSharedSync;
      const index = typeof snapshot === 'function' ? new NodeIndex(snapshot.call(client, 'Node')) : undefined;
      if (index) this.nodeIndex.set(ck, index);
      client.watch<Node>('Node', (e) => {
        index?.apply(e.type, e.object);
        const pid = e.object.spec?.providerID;
        if (!pid) return;
        const mk = this.byProviderID.get(`${ck}|${pid}`);
        if (mk) this.ctx.manager.enqueue(MACHINE_CONTROLLER, mk);
      }, { shared: true });
    }
    return client;
  }

  /** The first Node (in list order) whose spec.providerID is `providerID`. */
  private async nodeFor(namespace: string, clusterName: string, providerID: string): Promise<Readonly<Node> | undefined> {
    const client = this.workload(namespace, clusterName);
    const index = this.nodeIndex.get(`${namespace}/${clusterName}`);
    if (index) return index.first(providerID);
    return (await listShared<Node>(client, 'Node')).find((n) => n.spec?.providerID === providerID);
  }

  async reconcile(key: string): Promise<Result | void> {
    const { namespace, name } = splitKey(key);
    // Read-only (the store's own objects where it shares them): every change below is a new object written back.
    let m: Machine | undefined = await getShared<Machine>(this.ctx.mgmt, { kind: 'Machine', namespace, name });
    if (!m) return;
    const cluster: Cluster | undefined = await getShared<Cluster>(this.ctx.mgmt, { kind: 'Cluster', namespace, name: m.spec.clusterName });
    if (m.spec.providerID) this.byProviderID.set(`${namespace}/${m.spec.clusterName}|${m.spec.providerID}`, key);
    if (isDeleting(m)) return this.reconcileDelete(m, cluster);

    if (!m.metadata.finalizers?.includes(FINALIZER_MACHINE) || m.metadata.labels?.[LABEL_CLUSTER_NAME] !== m.spec.clusterName) {
      m = await this.ctx.mgmt.update<Machine>({
        ...m,
        metadata: {
          ...m.metadata,
          finalizers: [...new Set([...(m.metadata.finalizers ?? []), FINALIZER_MACHINE])],
          labels: { ...(m.metadata.labels ?? {}), [LABEL_CLUSTER_NAME]: m.spec.clusterName },
        },
      });
    }
    if (cluster?.spec.paused) return;

    const now = this.ctx.clock.now();
    const spec = structuredClone(m.spec);
    const status: MachineStatus = structuredClone(m.status ?? {});
    let requeue: number | undefined;

    // ---- bootstrap -----------------------------------------------------------
    const cfgRef = spec.bootstrap.configRef;
    if (cfgRef?.kind) {
      const cfg = await this.adopt<KubeadmConfig>(m, { kind: cfgRef.kind, namespace: cfgRef.namespace ?? namespace, name: cfgRef.name });
      if (!cfg) {
        if (!status.bootstrapReady) {
          status.conditions = markFalse(status.conditions, 'BootstrapReady', 'WaitingForBootstrapConfig', 'Info', `${cfgRef.kind} ${cfgRef.name} not found`, now);
        }
      } else if (cfg.status?.ready && cfg.status.dataSecretName) {
        spec.bootstrap.dataSecretName = cfg.status.dataSecretName;
        status.bootstrapReady = true;
        status.conditions = markTrue(status.conditions, 'BootstrapReady', now);
      } else if (!status.bootstrapReady) {
        status.conditions = markFalse(status.conditions, 'BootstrapReady', 'WaitingForDataSecret', 'Info', `waiting for ${cfgRef.kind} ${cfgRef.name} to provide the bootstrap data secret`, now);
      }
    } else if (spec.bootstrap.dataSecretName) {
      status.bootstrapReady = true;
      status.conditions = markTrue(status.conditions, 'BootstrapReady', now);
    }
    if (m.metadata.labels?.[LABEL_CONTROL_PLANE] !== undefined) {
      // machine_controller_phases.go reconcileCertificateExpiry: the Machine's own annotation, else its KubeadmConfig's
      // (KCP writes it: kcp-certificates.ts); neither (or unparseable, where upstream fails the reconcile): unset.
      const cfg = cfgRef?.kind === 'KubeadmConfig' ? await getShared<KubeadmConfig>(this.ctx.mgmt, { kind: cfgRef.kind, namespace: cfgRef.namespace ?? namespace, name: cfgRef.name }) : undefined;
      const expiry = Date.parse(m.metadata.annotations?.[ANNOTATION_CERTIFICATES_EXPIRY] ?? cfg?.metadata.annotations?.[ANNOTATION_CERTIFICATES_EXPIRY] ?? '');
      if (Number.isFinite(expiry)) status.certificatesExpiryDate = rfc3339(expiry);
      else delete status.certificatesExpiryDate;
    }

    // ---- infrastructure ------------------------------------------------------
    const infraRef = spec.infrastructureRef;
    const infra = infraRef.kind ? await this.adopt<InfraMachine>(m, { kind: infraRef.kind, namespace: infraRef.namespace ?? namespace, name: infraRef.name }) : undefined;
    if (!infra) {
      if (status.infrastructureReady) {
        status.failureReason = 'InvalidConfiguration';
        status.failureMessage = `Machine infrastructure resource ${infraRef.kind} ${infraRef.name} has been deleted after being ready`;
      } else {
        status.conditions = markFalse(status.conditions, 'InfrastructureReady', 'WaitingForInfrastructure', 'Info', `${infraRef.kind} ${infraRef.name} not found`, now);
      }
    } else {
      if (infra.status?.failureReason) status.failureReason = infra.status.failureReason;
      if (infra.status?.failureMessage) status.failureMessage = infra.status.failureMessage;
      if (infra.status?.ready && infra.spec?.providerID) {
        spec.providerID = infra.spec.providerID;
        if (infra.status.addresses) status.addresses = structuredClone(infra.status.addresses);
        if (infra.spec.failureDomain && !spec.failureDomain) spec.failureDomain = infra.spec.failureDomain;
        status.infrastructureReady = true;
        status.conditions = markTrue(status.conditions, 'InfrastructureReady', now);
      } else if (!status.infrastructureReady) {
        const why = infra.status?.failureReason ? `${infra.status.failureReason}: ${infra.status.failureMessage ?? ''}` : `waiting for ${infra.kind} ${infra.metadata.name} to be ready`;
        status.conditions = markFalse(status.conditions, 'InfrastructureReady', infra.status?.failureReason ? 'InfrastructureFailed' : 'WaitingForInfrastructure', infra.status?.failureReason ? 'Error' : 'Info', why, now);
      }
    }

    // ---- node ----------------------------------------------------------------
    if (spec.providerID) {
      this.byProviderID.set(`${namespace}/${spec.clusterName}|${spec.providerID}`, key);
      const node = await this.nodeFor(namespace, spec.clusterName, spec.providerID);
      if (node) {
        status.nodeRef = { kind: 'Node', name: node.metadata.name, apiVersion: 'v1', ...(node.metadata.uid ? { uid: node.metadata.uid } : {}) };
        if (node.status?.nodeInfo?.kubeletVersion) status.nodeInfo = { kubeletVersion: node.status.nodeInfo.kubeletVersion };
        status.conditions = nodeReady(node)
          ? markTrue(status.conditions, 'NodeHealthy', now)
          : markFalse(status.conditions, 'NodeHealthy', 'NodeConditionsFailed', 'Warning', `Node ${node.metadata.name} is not Ready`, now);
      } else if (status.nodeRef) {
        status.conditions = markFalse(status.conditions, 'NodeHealthy', 'NodeNotFound', 'Error', `Node ${status.nodeRef.name} not found in the workload cluster`, now);
      } else {
        status.conditions = markFalse(status.conditions, 'NodeHealthy', 'WaitingForNodeRef', 'Info', `waiting for a Node with providerID ${spec.providerID}`, now);
        requeue = NODE_REF_POLL_MS;
      }
    }

    // ---- ready summary + phase -------------------------------------------------
    const bOk = getCondition(status.conditions, 'BootstrapReady')?.status === 'True';
    const iOk = getCondition(status.conditions, 'InfrastructureReady')?.status === 'True';
    status.conditions = bOk && iOk ? markTrue(status.conditions, 'Ready', now) : markFalse(status.conditions, 'Ready', !bOk ? 'WaitingForBootstrap' : 'WaitingForInfrastructure', 'Info', !bOk ? 'bootstrap not ready' : 'infrastructure not ready', now);
    status.phase = computePhase(m, spec.providerID, status);
    status.observedGeneration = m.metadata.generation;

    if (!sameJson(spec, m.spec)) m = await this.ctx.mgmt.update<Machine>({ ...m, spec });
    await this.writeStatus(m, status);
    if (requeue !== undefined) return { requeueAfter: requeue };
  }

  /** Make the Machine the controller owner of a referenced object (reconcileExternal). */
  private async adopt<T extends KubeObject>(m: Machine, ref: ObjectRef): Promise<Readonly<T> | undefined> {
    const obj = await getShared<T>(this.ctx.mgmt, ref);
    if (!obj) return undefined;
    if (isDeleting(obj)) return obj;
    const refs = (obj.metadata.ownerReferences ?? []).filter((r) => r.kind !== 'MachineSet' && !(r.kind === 'Machine' && r.name === m.metadata.name));
    refs.push(ownerRef(m));
    const labels = { ...(obj.metadata.labels ?? {}), [LABEL_CLUSTER_NAME]: m.spec.clusterName };
    if (sameJson(refs, obj.metadata.ownerReferences ?? []) && sameJson(labels, obj.metadata.labels ?? {})) return obj;
    return this.ctx.mgmt.update<T>({ ...obj, metadata: { ...obj.metadata, ownerReferences: refs, labels } });
  }

  private async writeStatus(m: Machine, status: MachineStatus): Promise<Machine> {
    const prev = m.status?.phase;
    if (prev !== status.phase) status.lastUpdated = rfc3339(this.ctx.clock.now());
    if (sameJson(status, m.status ?? {})) return m;
    const stored = await this.ctx.mgmt.updateStatus<Machine>({ ...m, status });
    if (prev !== status.phase) this.phaseEvent(m, status.phase);
    return stored;
  }

  private phaseEvent(m: Machine, phase: MachinePhase | undefined): void {
    this.ctx.events.record({
      source: 'capi',
      type: 'machine.phase',
      message: `Machine ${keyFor(m)} phase ${m.status?.phase ?? '(none)'} -> ${phase}`,
      data: { machine: m.metadata.name, phase },
      ...(phase === 'Deleting' || phase === 'Deleted' ? { rules: ['MD-4'] } : {}),
    });
    this.log.info('machine phase changed', { machine: keyFor(m), phase });
  }

  // ---- deletion ---------------------------------------------------------------

  /** "<what>|<Machine uid>" already traced (skipped Node deletion, drain / volume-detach timeouts). */
  private readonly skipLogged = new Set<string>();

  private onceFor(what: string, m: Machine, fn: () => void): void {
    const id = `${what}|${m.metadata.uid ?? keyFor(m)}`;
    if (this.skipLogged.has(id)) return;
    this.skipLogged.add(id);
    fn();
  }

  /**
   * Upstream only logs why the Node is kept (reconcileDelete: "Skipping
   * deletion of Kubernetes Node associated with Machine as it is not
   * allowed", with the cause), on every reconcile; no condition or Event.
   * The model writes that log line and one trace event per Machine.
   */
  private nodeDeletionSkipped(m: Machine, cause: NodeDeleteSkip): void {
    const node = m.status?.nodeRef?.name ?? '';
    this.log.info('Skipping deletion of Kubernetes Node associated with Machine as it is not allowed', { machine: keyFor(m), node, cause });
    this.onceFor('node-deletion-skipped', m, () =>
      this.ctx.events.record({
        source: 'capi',
        type: 'machine.node-deletion-skipped',
        message: `Machine ${keyFor(m)}: Node ${node || '(none)'} is neither drained nor deleted: ${cause}`,
        data: { machine: m.metadata.name, node, cause },
        rules: ['MD-4'],
      }),
    );
  }

  private async reconcileDelete(m: Machine, cluster: Cluster | undefined): Promise<Result | void> {
    const namespace = m.metadata.namespace ?? 'default';
    const now = this.ctx.clock.now();
    if (!m.metadata.finalizers?.includes(FINALIZER_MACHINE)) return;
    let status: MachineStatus = structuredClone(m.status ?? {});
    status.phase = 'Deleting';
    m = await this.writeStatus(m, status);
    status = structuredClone(m.status ?? {});

    // 0. May the Node be drained and deleted at all (upstream isDeleteNodeAllowed, src/world/capi/machine-delete-gate.ts)?
    const ir0 = m.spec.infrastructureRef;
    const infra0 = ir0.kind ? await getShared<InfraMachine>(this.ctx.mgmt, { kind: ir0.kind, namespace: ir0.namespace ?? namespace, name: ir0.name }) : undefined;
    const gate = await isDeleteNodeAllowed({
      mgmt: this.ctx.mgmt,
      machine: m,
      cluster,
      ...(infra0?.spec?.providerID ? { infraProviderID: infra0.spec.providerID } : {}),
      nodeByProviderID: async (pid) => {
        const n = await this.nodeFor(namespace, m!.spec.clusterName, pid);
        return n ? { name: n.metadata.name, ...(n.metadata.uid ? { uid: n.metadata.uid } : {}) } : undefined;
      },
    });
    for (const note of gate.notes) this.log.error(note, { machine: keyFor(m) });
    if (gate.allowed && gate.foundNode) {
      // Found by providerID: upstream takes it as the nodeRef (and patches it at the end of the reconcile).
      status.nodeRef = { kind: 'Node', name: gate.foundNode.name, apiVersion: 'v1', ...(gate.foundNode.uid ? { uid: gate.foundNode.uid } : {}) };
      m = await this.writeStatus(m, status);
      status = structuredClone(m.status ?? {});
    }
    if (!gate.allowed) this.nodeDeletionSkipped(m, gate.cause);
    const nodeName = gate.allowed ? gate.nodeName : undefined;
    const workload = gate.allowed ? this.workload(namespace, m.spec.clusterName) : undefined;

    // 1. Cordon and drain (nodeDrainTimeout).
    if (workload && nodeName && !(m.metadata.annotations && ANN_EXCLUDE_NODE_DRAINING in m.metadata.annotations)) {
      const drained = getCondition(status.conditions, 'DrainingSucceeded');
      if (drained?.status !== 'True') {
        if (!drained) status.conditions = markFalse(status.conditions, 'DrainingSucceeded', 'Draining', 'Info', `Draining Node ${nodeName}`, now);
        const started = getCondition(status.conditions, 'DrainingSucceeded')!.lastTransitionTime;
        const timeout = durationMs(m.spec.nodeDrainTimeout, 0);
        const node = await workload.get<Node>({ kind: 'Node', name: nodeName });
        if (timeout > 0 && msSince(started, now) > timeout) {
          // Upstream isNodeDrainAllowed → nodeDrainTimeoutExceeded: the drain is skipped from now on; DrainingSucceeded
          // keeps its last False reason and no Kubernetes Event is recorded. The model traces it once.
          this.onceFor('drain-timeout', m, () => {
            this.ctx.events.record({ source: 'capi', type: 'machine.drain-timeout', message: `Machine ${keyFor(m)}: nodeDrainTimeout ${m.spec.nodeDrainTimeout} exceeded, skipping drain of Node ${nodeName}`, data: { machine: m.metadata.name, node: nodeName }, rules: ['MD-4'] });
            this.log.info('nodeDrainTimeout exceeded, skipping Node drain', { machine: keyFor(m), node: nodeName });
          });
        } else if (node) {
          if (!node.spec?.unschedulable) {
            await workload.update<Node>({ ...node, spec: { ...(node.spec ?? {}), unschedulable: true } });
            this.ctx.events.record({ source: 'capi', type: 'machine.node-cordoned', message: `Machine ${keyFor(m)}: cordoned Node ${nodeName}`, data: { machine: m.metadata.name, node: nodeName }, rules: ['MD-4'] });
          }
          if (node.metadata.annotations?.[ANN_DRAIN_BLOCKED] === 'true') {
            status.conditions = markFalse(status.conditions, 'DrainingSucceeded', 'DrainError', 'Warning', `Drain of Node ${nodeName} blocked: pods cannot be evicted (annotation ${ANN_DRAIN_BLOCKED})`, now);
            if (drained?.reason !== 'DrainError') {
              await this.ctx.recorder.record('capi', 'machine-controller', m, 'Warning', 'FailedDrainNode', `error draining Machine's node "${nodeName}": pods cannot be evicted`, ['MD-4']);
            }
            await this.writeStatus(m, status);
            return { requeueAfter: timeout > 0 ? Math.min(DRAIN_RETRY_MS, Math.max(1, timeout - msSince(started, now) + 1)) : DRAIN_RETRY_MS };
          }
          // Evict the Node's pods through the workload cluster (DaemonSet and mirror pods stay; src/world/workload/drain.ts).
          const drain = await drainNode(workload, nodeName);
          if (drain.waiting.length) {
            status.conditions = markFalse(status.conditions, 'DrainingSucceeded', 'Draining', 'Info', `Drain not completed yet: Pods ${drain.waiting.join(', ')}: deletionTimestamp set, but still not removed from the Node`, now);
            await this.writeStatus(m, status);
            return { requeueAfter: DRAIN_RETRY_MS };
          }
          status.conditions = markTrue(status.conditions, 'DrainingSucceeded', now);
          this.ctx.events.record({
            source: 'capi',
            type: 'machine.node-drained',
            message: `Machine ${keyFor(m)}: drained Node ${nodeName}: evicted ${drain.evicted.length} pod(s)${drain.evicted.length ? ` (${drain.evicted.join(', ')})` : ''}, skipped ${drain.skipped.length} (DaemonSet-managed and mirror pods)`,
            data: { machine: m.metadata.name, node: nodeName, evicted: drain.evicted, skipped: drain.skipped.length },
            rules: ['MD-4'],
          });
          if (drain.evicted.length) this.log.info(`evicted pods from Node ${nodeName}`, { machine: keyFor(m), node: nodeName, pods: drain.evicted, warnings: drain.warnings });
          await this.ctx.recorder.record('capi', 'machine-controller', m, 'Normal', 'SuccessfulDrainNode', `success draining Machine's node "${nodeName}"`);
        } else {
          status.conditions = markTrue(status.conditions, 'DrainingSucceeded', now);
        }
        m = await this.writeStatus(m, status);
        status = structuredClone(m.status ?? {});
      }
    }

    // 2. Wait for volumes to detach (nodeVolumeDetachTimeout).
    if (workload && nodeName && !(m.metadata.annotations && ANN_EXCLUDE_WAIT_FOR_VOLUME_DETACH in m.metadata.annotations)) {
      const detached = getCondition(status.conditions, 'VolumeDetachSucceeded');
      if (detached?.status !== 'True') {
        if (!detached) status.conditions = markFalse(status.conditions, 'VolumeDetachSucceeded', 'WaitingForVolumeDetach', 'Info', `Waiting for volumes of Node ${nodeName} to detach`, now);
        const started = getCondition(status.conditions, 'VolumeDetachSucceeded')!.lastTransitionTime;
        const timeout = durationMs(m.spec.nodeVolumeDetachTimeout, 0);
        const node = await workload.get<Node>({ kind: 'Node', name: nodeName });
        // Upstream shouldWaitForNodeVolumes: no Node, or an unreachable one (Ready Unknown, noderefutil.IsNodeUnreachable), is not waited for.
        const unreachable = node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'Unknown') ?? false;
        const attached = unreachable ? 0 : (node?.status?.volumesAttached?.length ?? 0);
        if (timeout > 0 && msSince(started, now) > timeout) {
          // Upstream isNodeVolumeDetachingAllowed → nodeVolumeDetachTimeoutExceeded: no more waiting; VolumeDetachSucceeded
          // stays False and no Kubernetes Event is recorded. The model traces it once.
          this.onceFor('volume-detach-timeout', m, () => {
            this.ctx.events.record({ source: 'capi', type: 'machine.volume-detach-timeout', message: `Machine ${keyFor(m)}: nodeVolumeDetachTimeout ${m.spec.nodeVolumeDetachTimeout} exceeded with ${attached} volume(s) still attached to Node ${nodeName}`, data: { machine: m.metadata.name, node: nodeName, attached }, rules: ['MD-4'] });
            this.log.info('nodeVolumeDetachTimeout exceeded, no longer waiting for volumes to detach', { machine: keyFor(m), node: nodeName, attached });
          });
          m = await this.writeStatus(m, status);
          status = structuredClone(m.status ?? {});
        } else if (attached > 0) {
          m = await this.writeStatus(m, status);
          return { requeueAfter: VOLUME_DETACH_RETRY_MS };
        } else {
          status.conditions = markTrue(status.conditions, 'VolumeDetachSucceeded', now);
          m = await this.writeStatus(m, status);
          status = structuredClone(m.status ?? {});
        }
      }
    }

    // 3. Delete the bootstrap config and the infrastructure machine; wait for the latter to be gone.
    const cfgRef = m.spec.bootstrap.configRef;
    if (cfgRef?.kind) await this.ctx.mgmt.delete({ kind: cfgRef.kind, namespace: cfgRef.namespace ?? namespace, name: cfgRef.name }, { ignoreNotFound: true });
    const ir = m.spec.infrastructureRef;
    if (ir.kind) {
      const iref = { kind: ir.kind, namespace: ir.namespace ?? namespace, name: ir.name };
      const infra = await getShared(this.ctx.mgmt, iref);
      if (infra) {
        if (!isDeleting(infra)) {
          await this.ctx.mgmt.delete(iref, { ignoreNotFound: true });
          this.ctx.events.record({ source: 'capi', type: 'machine.infrastructure-deleting', message: `Machine ${keyFor(m)}: deleting ${ir.kind} ${ir.name}`, data: { machine: m.metadata.name, infrastructure: ir.name }, rules: ['MD-4'] });
        }
        if (await getShared(this.ctx.mgmt, iref)) {
          status.conditions = markFalse(status.conditions, 'InfrastructureReady', 'Deleting', 'Info', `waiting for ${ir.kind} ${ir.name} to be deleted`, now);
          await this.writeStatus(m, status);
          return { requeueAfter: INFRA_DELETE_POLL_MS };
        }
      }
    }

    // 4. Delete the Node (give up after nodeDeletionTimeout, counted from the deletion timestamp).
    if (workload && nodeName) {
      try {
        await workload.delete({ kind: 'Node', name: nodeName }, { ignoreNotFound: true });
        this.ctx.events.record({ source: 'capi', type: 'machine.node-deleted', message: `Machine ${keyFor(m)}: deleted Node ${nodeName}`, data: { machine: m.metadata.name, node: nodeName }, rules: ['MD-4'] });
      } catch (e) {
        const timeout = durationMs(m.spec.nodeDeletionTimeout, DEFAULT_NODE_DELETION_TIMEOUT_MS);
        if (msSince(m.metadata.deletionTimestamp, now) <= timeout) {
          this.log.error('failed to delete Node, will retry', { machine: keyFor(m), node: nodeName, err: String(e) });
          return { requeueAfter: Math.min(5_000, timeout) };
        }
        await this.ctx.recorder.record('capi', 'machine-controller', m, 'Warning', 'FailedDeleteNode', `giving up deleting Node "${nodeName}" after nodeDeletionTimeout: ${String(e)}`, ['MD-4']);
      }
    }

    // 5. Remove the finalizer.
    for (const what of ['node-deletion-skipped', 'drain-timeout', 'volume-detach-timeout']) this.skipLogged.delete(`${what}|${m.metadata.uid ?? keyFor(m)}`);
    this.phaseEvent(m, 'Deleted');
    const fresh = await this.ctx.mgmt.get<Machine>({ kind: 'Machine', namespace, name: m.metadata.name });
    if (!fresh) return;
    fresh.metadata.finalizers = (fresh.metadata.finalizers ?? []).filter((f) => f !== FINALIZER_MACHINE);
    await this.ctx.mgmt.update(fresh);
    if (fresh.spec.providerID) this.byProviderID.delete(`${namespace}/${fresh.spec.clusterName}|${fresh.spec.providerID}`);
  }
}

/** machine_controller_phases.go reconcilePhase (later rules win). */
export function computePhase(m: Machine, providerID: string | undefined, s: MachineStatus): MachinePhase {
  let phase: MachinePhase = s.phase ?? 'Pending';
  if (!s.phase) phase = 'Pending';
  if (s.bootstrapReady && !s.infrastructureReady) phase = 'Provisioning';
  if (providerID) phase = 'Provisioned';
  if (s.nodeRef && s.infrastructureReady) phase = 'Running';
  if (s.failureReason || s.failureMessage) phase = 'Failed';
  if (isDeleting(m)) phase = 'Deleting';
  return phase;
}

export function conditionOf(m: Machine, type: string): Condition | undefined {
  return getCondition(m.status?.conditions, type);
}

export function setupMachineController(ctx: ControllerContext): MachineReconciler {
  const r = new MachineReconciler(ctx);
  ctx.manager.register(r);
  ctx.mgmt.watch<Machine>('Machine', (e) => ctx.manager.enqueue(MACHINE_CONTROLLER, keyFor(e.object)), { shared: true });
  const toMachine = (e: { object: KubeObject }): void => {
    const owner = e.object.metadata.ownerReferences?.find((x) => x.kind === 'Machine');
    if (owner) ctx.manager.enqueue(MACHINE_CONTROLLER, `${e.object.metadata.namespace ?? 'default'}/${owner.name}`);
  };
  ctx.mgmt.watch('HCSMachine', toMachine, { shared: true });
  ctx.mgmt.watch('KubeadmConfig', toMachine, { shared: true });
  return r;
}

/** Nodes by spec.providerID, then by name (an informer index over the Node watch). */
class NodeIndex {
  private readonly byPid = new Map<string, Map<string, Readonly<Node>>>();
  private readonly pidOf = new Map<string, string>();

  constructor(nodes: readonly Readonly<Node>[]) {
    for (const n of nodes) this.apply('ADDED', n);
  }

  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', n: Readonly<Node>): void {
    const name = n.metadata.name;
    const old = this.pidOf.get(name);
    if (old !== undefined) {
      const m = this.byPid.get(old);
      m?.delete(name);
      if (m?.size === 0) this.byPid.delete(old);
      this.pidOf.delete(name);
    }
    const pid = n.spec?.providerID;
    if (type === 'DELETED' || !pid) return;
    let m = this.byPid.get(pid);
    if (!m) this.byPid.set(pid, (m = new Map()));
    m.set(name, n);
    this.pidOf.set(name, pid);
  }

  /** As `list('Node').find(providerID)`: the lowest name in the store's key order. */
  first(pid: string): Readonly<Node> | undefined {
    const m = this.byPid.get(pid);
    if (!m) return undefined;
    let best: Readonly<Node> | undefined;
    for (const n of m.values()) if (!best || n.metadata.name.localeCompare(best.metadata.name) < 0) best = n;
    return best;
  }
}
