/**
 * MachineDeployment controller, modelled on cluster-api v1beta1
 * internal/controllers/machinedeployment/{machinedeployment_controller.go,
 * rolling.go, sync.go} (which follow the Kubernetes Deployment controller):
 * - defaults as the upstream webhook (RollingUpdate, maxSurge 1,
 *   maxUnavailable 0, replicas 1, deletePolicy Random, revisionHistoryLimit 1,
 *   selector/template labels cluster-name + deployment-name);
 * - one MachineSet per machine template (name `<md>-<SafeEncodeString(hash)>`,
 *   label machine-template-hash, annotations revision / desired-replicas /
 *   max-replicas);
 * - RollingUpdate: reconcileNewMachineSet (scale up within maxSurge) then
 *   reconcileOldMachineSets (cleanupUnhealthyReplicas, then
 *   scaleDownOldMachineSetsForRollingUpdate within maxUnavailable);
 * - status (replicas/updated/ready/available/unavailable, phase) and
 *   cleanup of old MachineSets beyond revisionHistoryLimit once complete.
 * Not modelled: OnDelete strategy, paused proportional scaling (sync/scale),
 * progress deadline, MachineSet adoption of orphans.
 */
import { CAPI_VERSION, LABEL_MACHINE_TEMPLATE_HASH } from '../api/capi.js';
import type { Cluster, MachineDeployment, MachineDeploymentStatus, MachineSet } from '../api/capi.js';
import { isNotFound, KubeApiError } from '../kube/errors.js';
import { controllerOf, isDeleting, ownerRef } from '../kube/types.js';
import type { Controller, Result } from '../runtime/manager.js';
import type { ControllerContext, Logger } from '../runtime/context.js';
import {
  applyMachineDeploymentDefaults,
  computeTemplateHash,
  equalMachineTemplate,
  findNewMachineSet,
  machineSetNameFor,
  maxRevision,
  maxSurge,
  maxUnavailable,
  newMSNewReplicas,
  replicasAnnotationsNeedUpdate,
  revisionOf,
  setNewMachineSetAnnotations,
  sortByCreation,
  totalAvailable,
  totalReady,
  totalSpecReplicas,
  totalStatusReplicas,
} from './mdutil.js';
import { ANN_DESIRED_REPLICAS, ANN_MAX_REPLICAS, ANN_REVISION, CAPI_DEPLOYMENT, canonicalJson, ensureOwnerRef, keyFor, markFalse, markTrue, splitKey } from './util.js';

export const MACHINEDEPLOYMENT_CONTROLLER = 'capi-machinedeployment';

export class MachineDeploymentReconciler implements Controller {
  readonly name = MACHINEDEPLOYMENT_CONTROLLER;
  private readonly log: Logger;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logs.logger(CAPI_DEPLOYMENT, 'machinedeployment');
  }

  async reconcile(key: string): Promise<Result | void> {
    const { namespace, name } = splitKey(key);
    let md = await this.ctx.mgmt.get<MachineDeployment>({ kind: 'MachineDeployment', namespace, name });
    if (!md || isDeleting(md)) return; // dependents go with the garbage collector

    // Defaults (persisted, like the upstream defaulting webhook) and Cluster ownership.
    const changed = applyMachineDeploymentDefaults(md);
    const cluster = await this.ctx.mgmt.get<Cluster>({ kind: 'Cluster', namespace, name: md.spec.clusterName });
    let refsChanged = false;
    if (cluster && !md.metadata.ownerReferences?.some((r) => r.kind === 'Cluster')) {
      md.metadata.ownerReferences = ensureOwnerRef(md.metadata.ownerReferences, ownerRef(cluster, false));
      refsChanged = true;
    }
    if (changed || refsChanged) {
      await this.ctx.mgmt.update(md);
      return; // the update event brings us back with the defaulted object
    }
    if (cluster?.spec.paused) return;

    // MachineSets this deployment controls.
    const uid = md.metadata.uid;
    const msList = (await this.ctx.mgmt.list<MachineSet>('MachineSet', { namespace })).filter((ms) => controllerOf(ms)?.uid === uid);

    if (md.spec.paused) {
      md = await this.syncStatus(md, msList, findNewMachineSet(md, msList));
      return;
    }
    if (md.spec.strategy?.type === 'OnDelete') {
      this.log.info('OnDelete strategy is not modelled; only status is reconciled', { machinedeployment: key });
      await this.syncStatus(md, msList, findNewMachineSet(md, msList));
      return;
    }
    return this.rolloutRolling(md, msList);
  }

  // ---- rolling.go ------------------------------------------------------------

  private async rolloutRolling(md: MachineDeployment, msList: MachineSet[]): Promise<Result | void> {
    const existingNew = findNewMachineSet(md, msList);
    let oldMSs = msList.filter((ms) => ms !== existingNew);
    const newMS = await this.getNewMachineSet(md, existingNew, oldMSs);
    // Re-read the deployment: getNewMachineSet may have bumped its revision annotation.
    md = (await this.ctx.mgmt.get<MachineDeployment>({ kind: 'MachineDeployment', namespace: md.metadata.namespace, name: md.metadata.name })) ?? md;
    const all = (): MachineSet[] => [...oldMSs, newMS];

    await this.reconcileNewMachineSet(all(), newMS, md);
    oldMSs = await this.reconcileOldMachineSets(all(), oldMSs, newMS, md);
    md = await this.syncStatus(md, all(), newMS);
    if (this.deploymentComplete(md)) await this.cleanupDeployment(oldMSs, md);
  }

  private async getNewMachineSet(md: MachineDeployment, existing: MachineSet | undefined, oldMSs: MachineSet[]): Promise<MachineSet> {
    const newRevision = maxRevision(oldMSs) + 1;
    if (existing) {
      const ms = structuredClone(existing);
      const annChanged = setNewMachineSetAnnotations(md, ms, newRevision, true);
      const minReady = md.spec.minReadySeconds ?? 0;
      const policy = md.spec.strategy?.rollingUpdate?.deletePolicy;
      const specChanged = (ms.spec.minReadySeconds ?? 0) !== minReady || (policy !== undefined && ms.spec.deletePolicy !== policy);
      let cur = existing;
      if (annChanged || specChanged) {
        ms.spec.minReadySeconds = minReady;
        if (policy) ms.spec.deletePolicy = policy;
        cur = await this.ctx.mgmt.update(ms);
        Object.assign(existing, cur);
      }
      await this.setDeploymentRevision(md, cur.metadata.annotations?.[ANN_REVISION] ?? String(revisionOf(cur)));
      return existing;
    }

    const template = structuredClone(md.spec.template);
    const hash = computeTemplateHash(template);
    template.metadata = template.metadata ?? {};
    template.metadata.labels = { ...(template.metadata.labels ?? {}), [LABEL_MACHINE_TEMPLATE_HASH]: hash };
    const ms: MachineSet = {
      apiVersion: CAPI_VERSION,
      kind: 'MachineSet',
      metadata: {
        name: machineSetNameFor(md, hash),
        namespace: md.metadata.namespace,
        labels: { ...template.metadata.labels },
        ownerReferences: [ownerRef(md)],
      },
      spec: {
        clusterName: md.spec.clusterName,
        replicas: 0,
        minReadySeconds: md.spec.minReadySeconds ?? 0,
        selector: { matchLabels: { ...(md.spec.selector?.matchLabels ?? {}), [LABEL_MACHINE_TEMPLATE_HASH]: hash } },
        template,
        ...(md.spec.strategy?.rollingUpdate?.deletePolicy ? { deletePolicy: md.spec.strategy.rollingUpdate.deletePolicy } : {}),
      },
    };
    ms.spec.replicas = newMSNewReplicas(md, [...oldMSs, ms], 0);
    setNewMachineSetAnnotations(md, ms, newRevision, false);
    let created: MachineSet;
    try {
      created = await this.ctx.mgmt.create(ms);
      this.ctx.events.record({
        source: 'capi',
        type: 'machineset.created',
        message: `MachineDeployment ${keyFor(md)} created MachineSet ${ms.metadata.name} (revision ${newRevision}, replicas ${ms.spec.replicas})`,
        data: { machinedeployment: md.metadata.name, machineset: ms.metadata.name, revision: newRevision, replicas: ms.spec.replicas },
        rules: ['MD-5'],
      });
      await this.ctx.recorder.record('capi', 'machinedeployment-controller', md, 'Normal', 'SuccessfulCreate', `Created MachineSet "${ms.metadata.name}"`);
    } catch (e) {
      if (!(e instanceof KubeApiError && e.reason === 'AlreadyExists')) throw e;
      const got = await this.ctx.mgmt.get<MachineSet>({ kind: 'MachineSet', namespace: ms.metadata.namespace, name: ms.metadata.name });
      if (!got || controllerOf(got)?.uid !== md.metadata.uid || !equalMachineTemplate(md.spec.template, got.spec.template)) {
        throw new Error(`MachineSet ${ms.metadata.name} already exists and does not belong to MachineDeployment ${md.metadata.name} (template hash collision)`);
      }
      created = got;
    }
    await this.setDeploymentRevision(md, String(newRevision));
    return created;
  }

  private async setDeploymentRevision(md: MachineDeployment, revision: string): Promise<void> {
    if (md.metadata.annotations?.[ANN_REVISION] === revision) return;
    const fresh = await this.ctx.mgmt.get<MachineDeployment>({ kind: 'MachineDeployment', namespace: md.metadata.namespace, name: md.metadata.name });
    if (!fresh) return;
    fresh.metadata.annotations = { ...(fresh.metadata.annotations ?? {}), [ANN_REVISION]: revision };
    await this.ctx.mgmt.update(fresh);
  }

  private async reconcileNewMachineSet(allMSs: MachineSet[], newMS: MachineSet, md: MachineDeployment): Promise<void> {
    const want = md.spec.replicas ?? 1;
    const have = newMS.spec.replicas ?? 0;
    if (have === want) return;
    if (have > want) return this.scaleMachineSet(newMS, want, md);
    return this.scaleMachineSet(newMS, newMSNewReplicas(md, allMSs, have), md);
  }

  private async reconcileOldMachineSets(allMSs: MachineSet[], oldMSs: MachineSet[], newMS: MachineSet, md: MachineDeployment): Promise<MachineSet[]> {
    const oldCount = totalSpecReplicas(oldMSs);
    if (oldCount === 0) return oldMSs;
    const allCount = totalSpecReplicas(allMSs);
    const minAvailable = (md.spec.replicas ?? 1) - maxUnavailable(md);
    const newMSUnavailable = (newMS.spec.replicas ?? 0) - (newMS.status?.availableReplicas ?? 0);
    const maxScaledDown = allCount - minAvailable - newMSUnavailable;
    if (maxScaledDown <= 0) return oldMSs;
    // Clean up unhealthy replicas first, otherwise they block the rollout.
    await this.cleanupUnhealthyReplicas(oldMSs, md, maxScaledDown);
    await this.scaleDownOldMachineSetsForRollingUpdate([...oldMSs, newMS], oldMSs, md);
    return oldMSs;
  }

  private async cleanupUnhealthyReplicas(oldMSs: MachineSet[], md: MachineDeployment, maxCleanup: number): Promise<void> {
    let total = 0;
    for (const ms of sortByCreation(oldMSs)) {
      if (total >= maxCleanup) break;
      const replicas = ms.spec.replicas ?? 0;
      if (replicas === 0) continue;
      const available = ms.status?.availableReplicas ?? 0;
      // Upstream errors out when available > replicas (a Machine still being deleted); nothing to clean up then.
      if (replicas <= available) continue;
      const count = Math.min(maxCleanup - total, replicas - available);
      await this.scaleMachineSet(ms, replicas - count, md);
      total += count;
    }
  }

  private async scaleDownOldMachineSetsForRollingUpdate(allMSs: MachineSet[], oldMSs: MachineSet[], md: MachineDeployment): Promise<void> {
    const minAvailable = (md.spec.replicas ?? 1) - maxUnavailable(md);
    const available = totalAvailable(allMSs);
    if (available <= minAvailable) return;
    const toScale = available - minAvailable;
    let total = 0;
    for (const ms of sortByCreation(oldMSs)) {
      if (total >= toScale) break;
      const replicas = ms.spec.replicas ?? 0;
      if (replicas === 0) continue;
      const count = Math.min(replicas, toScale - total);
      await this.scaleMachineSet(ms, replicas - count, md);
      total += count;
    }
  }

  /** sync.go scaleMachineSet: set replicas and the desired/max replicas annotations. Mutates `ms` to the stored result. */
  private async scaleMachineSet(ms: MachineSet, newScale: number, md: MachineDeployment): Promise<void> {
    const desired = md.spec.replicas ?? 1;
    const max = desired + maxSurge(md);
    const from = ms.spec.replicas ?? 0;
    if (from === newScale && !replicasAnnotationsNeedUpdate(ms, desired, max)) return;
    const next = structuredClone(ms);
    next.spec.replicas = newScale;
    next.metadata.annotations = { ...(next.metadata.annotations ?? {}), [ANN_DESIRED_REPLICAS]: String(desired), [ANN_MAX_REPLICAS]: String(max) };
    const stored = await this.ctx.mgmt.update(next);
    Object.assign(ms, stored);
    if (from !== newScale) {
      this.ctx.events.record({
        source: 'capi',
        type: 'machineset.scaled',
        message: `Scaled MachineSet ${keyFor(ms)}: ${from} -> ${newScale}`,
        data: { machinedeployment: md.metadata.name, machineset: ms.metadata.name, from, to: newScale },
        rules: ['MD-1'],
      });
      await this.ctx.recorder.record('capi', 'machinedeployment-controller', md, 'Normal', 'SuccessfulScale', `Scaled MachineSet ${keyFor(ms)}: ${from} -> ${newScale}`);
    }
  }

  // ---- status / cleanup ------------------------------------------------------

  private async syncStatus(md: MachineDeployment, allMSs: MachineSet[], newMS: MachineSet | undefined): Promise<MachineDeployment> {
    const now = this.ctx.clock.now();
    const available = totalAvailable(allMSs);
    const total = totalSpecReplicas(allMSs);
    const replicas = md.spec.replicas ?? 1;
    const status: MachineDeploymentStatus = {
      observedGeneration: md.metadata.generation,
      selector: Object.entries(md.spec.selector?.matchLabels ?? {})
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
      replicas: totalStatusReplicas(allMSs),
      updatedReplicas: newMS ? newMS.status?.replicas ?? 0 : 0,
      readyReplicas: totalReady(allMSs),
      availableReplicas: available,
      unavailableReplicas: Math.max(0, total - available),
      conditions: md.status?.conditions,
    };
    if (replicas === status.readyReplicas) status.phase = 'Running';
    if (replicas > (status.readyReplicas ?? 0)) status.phase = 'ScalingUp';
    if (total - available < 0) status.phase = 'ScalingDown';
    if (allMSs.some((ms) => ms.status?.failureReason || ms.status?.failureMessage)) status.phase = 'Failed';
    const minNeeded = replicas - maxUnavailable(md);
    // Ready summarises Available, as upstream's conditions.SetSummary does for a single condition.
    for (const type of ['Available', 'Ready']) {
      status.conditions =
        available >= minNeeded
          ? markTrue(status.conditions, type, now)
          : markFalse(status.conditions, type, 'WaitingForAvailableMachines', 'Warning', `Minimum availability requires ${minNeeded} replicas, current ${available} available`, now);
    }
    if (canonicalJson(status) === canonicalJson(md.status ?? {})) return md;
    const prevPhase = md.status?.phase;
    const stored = await this.ctx.mgmt.updateStatus<MachineDeployment>({ ...md, status });
    if (prevPhase !== status.phase) {
      this.ctx.events.record({
        source: 'capi',
        type: 'machinedeployment.phase',
        message: `MachineDeployment ${keyFor(md)} phase ${prevPhase ?? '(none)'} -> ${status.phase}`,
        data: { machinedeployment: md.metadata.name, namespace: md.metadata.namespace, phase: status.phase },
      });
    }
    return stored;
  }

  /** mdutil.DeploymentComplete. */
  private deploymentComplete(md: MachineDeployment): boolean {
    const r = md.spec.replicas ?? 1;
    const s = md.status ?? {};
    return s.updatedReplicas === r && s.replicas === r && s.availableReplicas === r && (s.observedGeneration ?? 0) >= (md.metadata.generation ?? 0);
  }

  /** sync.go cleanupDeployment: keep revisionHistoryLimit old MachineSets that have no replicas left. */
  private async cleanupDeployment(oldMSs: MachineSet[], md: MachineDeployment): Promise<void> {
    const limit = md.spec.revisionHistoryLimit;
    if (limit === undefined) return;
    const cleanable = sortByCreation(oldMSs.filter((ms) => !isDeleting(ms)));
    const diff = cleanable.length - limit;
    for (let i = 0; i < diff; i++) {
      const ms = cleanable[i]!;
      if ((ms.status?.replicas ?? 0) !== 0 || (ms.spec.replicas ?? 0) !== 0 || (ms.metadata.generation ?? 0) > (ms.status?.observedGeneration ?? 0)) continue;
      try {
        await this.ctx.mgmt.delete({ kind: 'MachineSet', namespace: ms.metadata.namespace, name: ms.metadata.name });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      await this.ctx.recorder.record('capi', 'machinedeployment-controller', md, 'Normal', 'SuccessfulDelete', `Deleted MachineSet "${ms.metadata.name}"`);
    }
  }
}

export function setupMachineDeploymentController(ctx: ControllerContext): MachineDeploymentReconciler {
  const r = new MachineDeploymentReconciler(ctx);
  ctx.manager.register(r);
  ctx.mgmt.watch<MachineDeployment>('MachineDeployment', (e) => ctx.manager.enqueue(MACHINEDEPLOYMENT_CONTROLLER, keyFor(e.object)));
  ctx.mgmt.watch<MachineSet>('MachineSet', (e) => {
    const owner = controllerOf(e.object);
    if (owner?.kind === 'MachineDeployment') ctx.manager.enqueue(MACHINEDEPLOYMENT_CONTROLLER, `${e.object.metadata.namespace ?? 'default'}/${owner.name}`);
  });
  return r;
}
