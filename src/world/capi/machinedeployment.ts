/**
 * MachineDeployment controller, modelled on cluster-api v1.10.10 (the version
 * tools/capi builds) internal/controllers/machinedeployment/{machinedeployment_controller.go,
 * machinedeployment_sync.go, machinedeployment_rolling.go,
 * machinedeployment_rollout_ondelete.go}:
 * - defaults as the upstream webhook (RollingUpdate, maxSurge 1,
 *   maxUnavailable 0, replicas 1, no deletePolicy (Random at the MachineSet), revisionHistoryLimit 1,
 *   selector/template labels cluster-name + deployment-name);
 * - getAllMachineSetsAndSyncRevision: the new MachineSet is the first
 *   up-to-date one by decreasing replicas (a rollback re-uses a matching old
 *   MachineSet; with spec.rolloutAfter reached, only one created after it);
 *   the others are old, in that same order (FindOldMachineSets). A new
 *   MachineSet is named `<md>-<5 random chars>` with label
 *   machine-template-hash `<hash>-<same suffix>`, and is only created when the
 *   referenced templates exist (RB-3; re-checked every 30 s);
 * - in-place propagation to the new MachineSet only (computeDesiredMachineSet:
 *   annotations, template labels and annotations, minReadySeconds,
 *   deletePolicy, node timeouts); old MachineSets are only scaled, and with
 *   OnDelete get the disable-machine-create annotation, which the new one loses;
 * - the scale decisions come from the pure planner (rollout-planner.ts);
 * - revision / revision-history annotations, status, and cleanupDeployment:
 *   once the deployment is complete, the oldest old MachineSets beyond
 *   revisionHistoryLimit that have no replicas are deleted.
 */
import { CAPI_VERSION, LABEL_MACHINE_TEMPLATE_HASH } from '../../product/api/capi.js';
import type { Cluster, MachineDeployment, MachineDeploymentStatus, MachineSet } from '../../product/api/capi.js';
import { isNotFound } from '../../core/kube/errors.js';
import { getShared, listOwned, listShared } from '../../core/kube/client.js';
import { jsonClone } from '../../core/kube/patch.js';
import { controllerOf, isDeleting, ownerRef } from '../../core/kube/types.js';
import type { Machine } from '../../product/api/capi.js';
import type { Controller, Result } from '../../core/runtime/manager.js';
import type { ControllerContext, Logger } from '../../core/runtime/context.js';
import {
  SKIP_ANNOTATIONS,
  applyMachineDeploymentDefaults,
  computeTemplateHash,
  findNewMachineSet,
  rolloutAfterMs,
  machineSetNameFor,
  maxRevision,
  maxSurge,
  maxUnavailable,
  replicasAnnotationsNeedUpdate,
  revisionOf,
  setNewMachineSetAnnotations,
  sortByCreation,
  sortByDecreasingReplicas,
  totalAvailable,
  totalReady,
  totalSpecReplicas,
  totalStatusReplicas,
} from './mdutil.js';
import { ANN_DISABLE_MACHINE_CREATE } from './machineset.js';
import { plan, planPausedScale, type RolloutDeployment, type RolloutMachineSet } from './rollout-planner.js';
import { ANN_DESIRED_REPLICAS, ANN_MAX_REPLICAS, ANN_REVISION, ANN_REVISION_HISTORY, CAPI_DEPLOYMENT, sameJson, ensureOwnerRef, keyFor, markFalse, markTrue, splitKey } from './util.js';

export const MACHINEDEPLOYMENT_CONTROLLER = 'capi-machinedeployment';
const TEMPLATE_MISSING_REQUEUE_MS = 30_000;

export function toRolloutDeployment(md: MachineDeployment): RolloutDeployment {
  const type = md.spec.strategy?.type ?? 'RollingUpdate';
  return {
    replicas: md.spec.replicas ?? 1,
    strategy: type,
    ...(type === 'RollingUpdate' ? { maxSurge: md.spec.strategy?.rollingUpdate?.maxSurge ?? 1, maxUnavailable: md.spec.strategy?.rollingUpdate?.maxUnavailable ?? 0 } : {}),
  };
}

export function toRolloutMachineSet(ms: MachineSet): RolloutMachineSet {
  return {
    name: ms.metadata.name,
    created: ms.metadata.creationTimestamp ? Date.parse(ms.metadata.creationTimestamp) : Number.MAX_SAFE_INTEGER,
    specReplicas: ms.spec.replicas ?? 0,
    statusReplicas: ms.status?.replicas ?? 0,
    availableReplicas: ms.status?.availableReplicas ?? 0,
    ...intAnnotation(ms, ANN_MAX_REPLICAS, 'maxReplicasAnnotation'),
    ...intAnnotation(ms, ANN_DESIRED_REPLICAS, 'desiredReplicasAnnotation'),
  };
}

/** mdutil getIntFromAnnotation: the annotation as an int32, absent when missing or not an integer. */
function intAnnotation<K extends string>(ms: MachineSet, key: string, field: K): Partial<Record<K, number>> {
  const v = ms.metadata.annotations?.[key];
  if (v === undefined || !/^[+-]?\d+$/.test(v.trim())) return {};
  const n = Number(v.trim());
  return Math.abs(n) <= 2 ** 31 - 1 ? ({ [field]: n } as Partial<Record<K, number>>) : {};
}

export class MachineDeploymentReconciler implements Controller {
  readonly name = MACHINEDEPLOYMENT_CONTROLLER;
  /** Sums many children: coalesce bursts of child events (see Controller.coalesce). */
  readonly coalesce = true;
  private readonly log: Logger;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logs.logger(CAPI_DEPLOYMENT, 'machinedeployment');
  }

  async reconcile(key: string): Promise<Result | void> {
    const { namespace, name } = splitKey(key);
    const md = await this.ctx.mgmt.get<MachineDeployment>({ kind: 'MachineDeployment', namespace, name });
    if (!md || isDeleting(md)) return; // dependents go with the garbage collector

    // Defaults (persisted, like the upstream defaulting webhook) and Cluster ownership.
    const changed = applyMachineDeploymentDefaults(md);
    const cluster: Cluster | undefined = await getShared<Cluster>(this.ctx.mgmt, { kind: 'Cluster', namespace, name: md.spec.clusterName });
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

    const uid = md.metadata.uid;
    // Upstream lists the namespace's MachineSets (from its cache) and keeps those it controls
    // (machinedeployment_controller.go getAndAdoptMachineSetsForDeployment): read those that name this deployment
    // as an owner (the store's owner index, not the namespace: a fleet's namespace holds every cluster's) and copy
    // only the ones it controls.
    const msList = (await listOwned<MachineSet>(this.ctx.mgmt, 'MachineSet', namespace, uid ?? '')).filter((ms) => controllerOf(ms)?.uid === uid).map((ms) => jsonClone(ms) as MachineSet);
    if (md.spec.paused) return this.syncPaused(md, msList);
    return this.rollout(md, msList);
  }

  /**
   * A paused deployment (v1.10.10 machinedeployment_controller.go reconcile:
   * `if md.Spec.Paused { return r.sync(...) }`; machinedeployment_sync.go
   * sync): no rollout and no new MachineSet (getAllMachineSetsAndSyncRevision
   * with createIfNotExisted false), but the matching MachineSet still gets the
   * in-place fields and revision (updateMachineSet) and the deployment its
   * revision; then `scale()` resizes the MachineSets proportionally
   * (rollout-planner.ts planPausedScale), and the status is synced. No
   * cleanupDeployment while paused (upstream: a TODO in sync).
   */
  private async syncPaused(md: MachineDeployment, msList: MachineSet[]): Promise<void> {
    const live = msList.filter((ms) => !isDeleting(ms));
    const existingNew = findNewMachineSet(md, live, this.ctx.clock.now());
    const oldMSs = live.filter((ms) => ms !== existingNew);
    const newMS = existingNew ? await this.applyNewMachineSet(md, existingNew, undefined, maxRevision(oldMSs)) : undefined;
    if (newMS) await this.setDeploymentRevision(md, newMS.metadata.annotations?.[ANN_REVISION] ?? String(revisionOf(newMS)));
    const decision = planPausedScale(toRolloutDeployment(md), newMS && toRolloutMachineSet(newMS), oldMSs.map(toRolloutMachineSet), md.status?.replicas ?? 0);
    for (const n of decision.notes) this.log.info(n, { machinedeployment: keyFor(md) });
    const byName = new Map([...oldMSs, ...(newMS ? [newMS] : [])].map((ms) => [ms.metadata.name, ms]));
    for (const c of decision.calls) byName.set(c.name, await this.scaleMachineSet(md, byName.get(c.name)!, c.to));
    const fresh = (await this.ctx.mgmt.get<MachineDeployment>({ kind: 'MachineDeployment', namespace: md.metadata.namespace, name: md.metadata.name })) ?? md;
    const current = newMS ? byName.get(newMS.metadata.name) : undefined;
    await this.syncStatus(fresh, [...byName.values()], current);
  }

  /**
   * scaleMachineSet (machinedeployment_sync.go): spec.replicas and the
   * desired / max replicas annotations; nothing when neither changes. The
   * SuccessfulScale Event is recorded on every write, also when only the
   * annotations changed ("Scaled MachineSet x: 3 -> 3").
   */
  private async scaleMachineSet(md: MachineDeployment, ms: MachineSet, to: number): Promise<MachineSet> {
    const replicas = md.spec.replicas ?? 1;
    const from = ms.spec.replicas ?? 0;
    if (from === to && !replicasAnnotationsNeedUpdate(ms, replicas, replicas + maxSurge(md))) return ms;
    const next = structuredClone(ms);
    next.spec.replicas = to;
    next.metadata.annotations = { ...(next.metadata.annotations ?? {}), [ANN_DESIRED_REPLICAS]: String(replicas), [ANN_MAX_REPLICAS]: String(replicas + maxSurge(md)) };
    const stored = await this.ctx.mgmt.update(next);
    if (from !== to) await this.scaledEvent(md, stored, from, to);
    else await this.ctx.recorder.record('capi', 'machinedeployment-controller', md, 'Normal', 'SuccessfulScale', `Scaled MachineSet ${keyFor(ms)}: ${from} -> ${to}`);
    return stored;
  }

  /** rolloutRollingUpdate / rolloutOnDelete: init the planner, plan, apply, status, cleanup. */
  private async rollout(md: MachineDeployment, msList: MachineSet[]): Promise<Result | void> {
    const live = msList.filter((ms) => !isDeleting(ms));
    const now = this.ctx.clock.now();
    const existingNew = findNewMachineSet(md, live, now);
    // FindOldMachineSets keeps FindNewMachineSet's order: decreasing spec.replicas, then oldest, then name.
    const oldMSs = sortByDecreasingReplicas(live.filter((ms) => ms !== existingNew));
    // Upstream has no timer for rolloutAfter: the next reconcile after it (any event, or the manager's
    // 10 min resync) starts the rollout. The model requeues at that instant instead (docs/capi.md).
    const after = rolloutAfterMs(md);
    const rolloutAt: Result | undefined = after !== undefined && after > now ? { requeueAfter: after - now } : undefined;

    let missing: string | undefined;
    if (!existingNew) missing = await this.missingTemplate(md);
    if (missing) {
      // planner.init: "cannot create a new MachineSet when templates do not exist" (RB-3).
      const msg = `${missing} not found: cannot create a new MachineSet for the current template until it exists (RB-3)`;
      if (!md.status?.conditions?.some((c) => c.type === 'Ready' && c.reason === 'TemplateNotFound' && c.message === msg)) {
        await this.ctx.recorder.record('capi', 'machinedeployment-controller', md, 'Warning', 'TemplateNotFound', msg, ['RB-3']);
        this.log.error('cannot create MachineSet: template missing', { machinedeployment: keyFor(md), missing });
      }
      await this.syncStatus(md, msList, undefined, msg);
      return { requeueAfter: TEMPLATE_MISSING_REQUEUE_MS };
    }

    const rd = toRolloutDeployment(md);
    const newRollout: RolloutMachineSet = existingNew
      ? toRolloutMachineSet(existingNew)
      : { name: '', created: Number.MAX_SAFE_INTEGER, specReplicas: 0, statusReplicas: 0, availableReplicas: 0 };
    let newName = existingNew?.metadata.name;
    let suffix = '';
    if (!newName) {
      suffix = this.ctx.rng.string(5);
      newName = machineSetNameFor(md, suffix);
      newRollout.name = newName;
    }
    const onDelete = rd.strategy === 'OnDelete';
    const oldInput: RolloutMachineSet[] = [];
    for (const ms of oldMSs) oldInput.push(onDelete ? { ...toRolloutMachineSet(ms), liveMachines: await this.liveMachines(ms) } : toRolloutMachineSet(ms));
    const decision = plan(rd, newRollout, oldInput);
    for (const n of decision.notes) this.log.info(n, { machinedeployment: keyFor(md) });

    // Apply: the new MachineSet first (getNewMachineSet, then reconcileNewMachineSet), then the old ones.
    const newMS = existingNew
      ? await this.applyNewMachineSet(md, existingNew, decision.scaleIntents[newName], maxRevision(oldMSs))
      : await this.createMachineSet(md, newName, suffix, decision.scaleIntents[newName] ?? 0, maxRevision(oldMSs));
    await this.setDeploymentRevision(md, newMS.metadata.annotations?.[ANN_REVISION] ?? String(revisionOf(newMS)));
    const applied: MachineSet[] = [];
    for (const ms of oldMSs) applied.push(await this.applyOldMachineSet(md, ms, decision.scaleIntents[ms.metadata.name], onDelete));

    const fresh = (await this.ctx.mgmt.get<MachineDeployment>({ kind: 'MachineDeployment', namespace: md.metadata.namespace, name: md.metadata.name })) ?? md;
    const synced = await this.syncStatus(fresh, [...applied, newMS], newMS);
    if (this.deploymentComplete(synced)) await this.cleanupDeployment(applied, synced);
    return rolloutAt;
  }

  /** The Machines matching the MachineSet's selector that are not being deleted (reconcileOldMachineSetsOnDelete lists them). */
  private async liveMachines(ms: MachineSet): Promise<number> {
    const machines = await listShared<Machine>(this.ctx.mgmt, 'Machine', { namespace: ms.metadata.namespace, labelSelector: ms.spec.selector.matchLabels ?? {} });
    return machines.filter((m) => !isDeleting(m)).length;
  }

  private async missingTemplate(md: MachineDeployment): Promise<string | undefined> {
    const ns = md.metadata.namespace;
    const infra = md.spec.template.spec.infrastructureRef;
    if (infra.kind && !(await getShared(this.ctx.mgmt, { kind: infra.kind, namespace: infra.namespace ?? ns, name: infra.name }))) return `${infra.kind} ${infra.name}`;
    const boot = md.spec.template.spec.bootstrap.configRef;
    if (boot?.kind && !(await getShared(this.ctx.mgmt, { kind: boot.kind, namespace: boot.namespace ?? ns, name: boot.name }))) return `${boot.kind} ${boot.name}`;
    return undefined;
  }

  /** computeDesiredMachineSet: the fields propagated in place from the deployment to its new MachineSet. */
  private desiredInPlace(md: MachineDeployment, ms: MachineSet): MachineSet {
    const next = structuredClone(ms);
    const hash = ms.metadata.labels?.[LABEL_MACHINE_TEMPLATE_HASH] ?? ms.spec.selector.matchLabels?.[LABEL_MACHINE_TEMPLATE_HASH] ?? '';
    const tplLabels = { ...(md.spec.template.metadata?.labels ?? {}), [LABEL_MACHINE_TEMPLATE_HASH]: hash };
    next.metadata.labels = { ...tplLabels };
    const ann: Record<string, string> = {};
    for (const [k, v] of Object.entries(md.metadata.annotations ?? {})) if (!SKIP_ANNOTATIONS.has(k)) ann[k] = v;
    for (const k of [ANN_REVISION, ANN_REVISION_HISTORY]) {
      const v = ms.metadata.annotations?.[k];
      if (v !== undefined) ann[k] = v;
    }
    const replicas = md.spec.replicas ?? 1;
    ann[ANN_DESIRED_REPLICAS] = String(replicas);
    ann[ANN_MAX_REPLICAS] = String(replicas + maxSurge(md));
    // cleanupDisableMachineCreateAnnotation: the new MachineSet may create Machines.
    delete ann[ANN_DISABLE_MACHINE_CREATE];
    next.metadata.annotations = ann;
    next.spec.template = {
      ...next.spec.template,
      metadata: {
        labels: { ...tplLabels },
        ...(md.spec.template.metadata?.annotations ? { annotations: { ...md.spec.template.metadata.annotations } } : {}),
      },
      spec: { ...next.spec.template.spec },
    };
    const s = next.spec.template.spec;
    for (const k of ['nodeDrainTimeout', 'nodeDeletionTimeout', 'nodeVolumeDetachTimeout'] as const) {
      const v = md.spec.template.spec[k];
      if (v === undefined) delete s[k];
      else s[k] = v;
    }
    next.spec.minReadySeconds = md.spec.minReadySeconds ?? 0;
    const policy = md.spec.strategy?.rollingUpdate?.deletePolicy;
    if (policy) next.spec.deletePolicy = policy;
    return next;
  }

  /** updateMachineSet (computeDesiredMachineSet), then reconcileNewMachineSet's scaleMachineSet. */
  private async applyNewMachineSet(md: MachineDeployment, ms: MachineSet, intent: number | undefined, maxOldRevision: number): Promise<MachineSet> {
    const next = this.desiredInPlace(md, ms);
    setNewMachineSetAnnotations(md, next, maxOldRevision + 1, true);
    return this.write(md, ms, next, intent);
  }

  /**
   * An old MachineSet is only touched by scaleMachineSet (spec.replicas and
   * the desired/max replicas annotations) and, with OnDelete while it has
   * replicas, by the disable-machine-create annotation.
   */
  private async applyOldMachineSet(md: MachineDeployment, ms: MachineSet, intent: number | undefined, onDelete: boolean): Promise<MachineSet> {
    const next = structuredClone(ms);
    const ann = { ...(next.metadata.annotations ?? {}) };
    if (onDelete && (ms.spec.replicas ?? 0) > 0 && !(ANN_DISABLE_MACHINE_CREATE in ann)) ann[ANN_DISABLE_MACHINE_CREATE] = 'true';
    // scaleMachineSet is called for every old MachineSet with replicas under OnDelete, only on a scale otherwise.
    if (intent !== undefined || (onDelete && (ms.spec.replicas ?? 0) > 0)) {
      const replicas = md.spec.replicas ?? 1;
      ann[ANN_DESIRED_REPLICAS] = String(replicas);
      ann[ANN_MAX_REPLICAS] = String(replicas + maxSurge(md));
    }
    next.metadata.annotations = ann;
    return this.write(md, ms, next, intent);
  }

  private async write(md: MachineDeployment, ms: MachineSet, next: MachineSet, intent: number | undefined): Promise<MachineSet> {
    const from = ms.spec.replicas ?? 0;
    if (intent !== undefined) next.spec.replicas = intent;
    if (sameJson({ m: next.metadata, s: next.spec }, { m: ms.metadata, s: ms.spec })) return ms;
    const stored = await this.ctx.mgmt.update(next);
    if (intent !== undefined && intent !== from) await this.scaledEvent(md, stored, from, intent);
    return stored;
  }

  private async createMachineSet(md: MachineDeployment, name: string, suffix: string, replicas: number, maxOldRevision: number): Promise<MachineSet> {
    const template = structuredClone(md.spec.template);
    const hash = `${computeTemplateHash(template)}-${suffix}`;
    const base: MachineSet = {
      apiVersion: CAPI_VERSION,
      kind: 'MachineSet',
      metadata: { name, namespace: md.metadata.namespace, labels: {}, ownerReferences: [ownerRef(md)] },
      spec: {
        clusterName: md.spec.clusterName,
        replicas,
        selector: { matchLabels: { ...(md.spec.selector?.matchLabels ?? {}), [LABEL_MACHINE_TEMPLATE_HASH]: hash } },
        template,
      },
    };
    base.metadata.labels = { [LABEL_MACHINE_TEMPLATE_HASH]: hash };
    const ms = this.desiredInPlace(md, base);
    setNewMachineSetAnnotations(md, ms, maxOldRevision + 1, false);
    const created = await this.ctx.mgmt.create(ms);
    const revision = created.metadata.annotations?.[ANN_REVISION];
    this.ctx.events.record({
      source: 'capi',
      type: 'machineset.created',
      message: `MachineDeployment ${keyFor(md)} created MachineSet ${name} (revision ${revision}, replicas ${replicas})`,
      data: { machinedeployment: md.metadata.name, machineset: name, revision: Number(revision), replicas },
      rules: ['MD-5'],
    });
    await this.ctx.recorder.record('capi', 'machinedeployment-controller', md, 'Normal', 'SuccessfulCreate', `Created MachineSet "${name}" with ${replicas} replicas`);
    if (replicas > 0) await this.scaledEvent(md, created, 0, replicas);
    return created;
  }

  private async scaledEvent(md: MachineDeployment, ms: MachineSet, from: number, to: number): Promise<void> {
    this.ctx.events.record({
      source: 'capi',
      type: 'machineset.scaled',
      message: `Scaled MachineSet ${keyFor(ms)}: ${from} -> ${to}`,
      data: { machinedeployment: md.metadata.name, machineset: ms.metadata.name, from, to },
      rules: ['MD-1'],
    });
    await this.ctx.recorder.record('capi', 'machinedeployment-controller', md, 'Normal', 'SuccessfulScale', `Scaled MachineSet ${keyFor(ms)}: ${from} -> ${to}`);
  }

  private async setDeploymentRevision(md: MachineDeployment, revision: string): Promise<void> {
    if (md.metadata.annotations?.[ANN_REVISION] === revision) return;
    const fresh = await this.ctx.mgmt.get<MachineDeployment>({ kind: 'MachineDeployment', namespace: md.metadata.namespace, name: md.metadata.name });
    if (!fresh || fresh.metadata.annotations?.[ANN_REVISION] === revision) return;
    fresh.metadata.annotations = { ...(fresh.metadata.annotations ?? {}), [ANN_REVISION]: revision };
    await this.ctx.mgmt.update(fresh);
  }

  // ---- status / cleanup ------------------------------------------------------

  private async syncStatus(md: MachineDeployment, allMSs: MachineSet[], newMS: MachineSet | undefined, templateMissing?: string): Promise<MachineDeployment> {
    const now = this.ctx.clock.now();
    const available = totalAvailable(allMSs);
    const total = totalSpecReplicas(allMSs);
    const replicas = md.spec.replicas ?? 1;
    const status: MachineDeploymentStatus = {
      observedGeneration: md.metadata.generation,
      selector: Object.entries(md.spec.selector?.matchLabels ?? {})
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
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
    status.conditions =
      available >= minNeeded
        ? markTrue(status.conditions, 'Available', now)
        : markFalse(status.conditions, 'Available', 'WaitingForAvailableMachines', 'Warning', `Minimum availability requires ${minNeeded} replicas, current ${available} available`, now);
    if (templateMissing) {
      status.conditions = markFalse(status.conditions, 'Ready', 'TemplateNotFound', 'Error', templateMissing, now);
    } else {
      // Ready summarises Available, as upstream's conditions.SetSummary does for a single condition.
      const a = status.conditions.find((c) => c.type === 'Available')!;
      status.conditions =
        a.status === 'True' ? markTrue(status.conditions, 'Ready', now) : markFalse(status.conditions, 'Ready', a.reason ?? 'WaitingForAvailableMachines', 'Warning', a.message ?? '', now);
    }
    if (sameJson(status, md.status ?? {})) return md;
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

  /**
   * cleanupDeployment (v1.10): of the old MachineSets not being deleted, the
   * oldest beyond spec.revisionHistoryLimit (defaulted to 1) are deleted when
   * they have no replicas left and their status is current. No limit: keep all.
   */
  private async cleanupDeployment(oldMSs: MachineSet[], md: MachineDeployment): Promise<void> {
    const limit = md.spec.revisionHistoryLimit;
    if (limit === undefined) return;
    const alive = sortByCreation(oldMSs.filter((x) => !isDeleting(x)));
    const diff = alive.length - limit;
    for (const ms of alive.slice(0, Math.max(diff, 0))) {
      if ((ms.status?.replicas ?? 0) !== 0 || (ms.spec.replicas ?? 0) !== 0 || (ms.metadata.generation ?? 0) > (ms.status?.observedGeneration ?? 0)) continue;
      try {
        await this.ctx.mgmt.delete({ kind: 'MachineSet', namespace: ms.metadata.namespace, name: ms.metadata.name });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      this.ctx.events.record({
        source: 'capi',
        type: 'machineset.deleted',
        message: `MachineDeployment ${keyFor(md)} deleted old MachineSet ${ms.metadata.name} (revision ${revisionOf(ms)})`,
        data: { machinedeployment: md.metadata.name, machineset: ms.metadata.name, revision: revisionOf(ms) },
      });
      await this.ctx.recorder.record('capi', 'machinedeployment-controller', md, 'Normal', 'SuccessfulDelete', `Deleted MachineSet "${ms.metadata.name}"`);
    }
  }
}

export function setupMachineDeploymentController(ctx: ControllerContext): MachineDeploymentReconciler {
  const r = new MachineDeploymentReconciler(ctx);
  ctx.manager.register(r);
  ctx.mgmt.watch<MachineDeployment>('MachineDeployment', (e) => ctx.manager.enqueue(MACHINEDEPLOYMENT_CONTROLLER, keyFor(e.object)), { shared: true });
  ctx.mgmt.watch<MachineSet>('MachineSet', (e) => {
    const owner = controllerOf(e.object);
    if (owner?.kind === 'MachineDeployment') ctx.manager.enqueue(MACHINEDEPLOYMENT_CONTROLLER, `${e.object.metadata.namespace ?? 'default'}/${owner.name}`);
  }, { shared: true });
  return r;
}
