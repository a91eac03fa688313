/**
 * MachineSet controller, modelled on cluster-api
 * internal/controllers/machineset/machineset_controller.go (v1beta1):
 * - lists Machines by selector, skips those controlled by someone else and
 *   adopts orphans;
 * - syncReplicas: creates Machines named `<ms>-<5 random chars>` after cloning
 *   the bootstrap template (KubeadmConfigTemplate → KubeadmConfig) and the
 *   infrastructure template (HCSMachineTemplate → HCSMachine) under the same
 *   name (external.CloneTemplate: template.spec.template, labels + cluster-name,
 *   cloned-from-name/groupkind annotations, ownerReference to the MachineSet);
 *   deletes surplus Machines chosen by the delete policy (delete-policy.ts);
 * - status replicas / fullyLabeled / ready / available from the Nodes of the
 *   workload cluster (Ready for minReadySeconds), requeue 15s until all ready.
 * Machines being deleted still count towards replicas (as upstream): a
 * replacement is created only when spec.replicas asks for one. No Machine is
 * created while the annotation cluster.x-k8s.io/disable-machine-create is "true"
 * (old MachineSets of an OnDelete MachineDeployment).
 */
import { BOOTSTRAP_VERSION, CAPI_VERSION, LABEL_CLUSTER_NAME, LABEL_DEPLOYMENT_NAME, LABEL_SET_NAME } from '../api/capi.js';
import type { Cluster, Machine, MachineSet, MachineSetStatus, ObjectReference } from '../api/capi.js';
import { ANNOTATION_CLONED_FROM_GROUPKIND, ANNOTATION_CLONED_FROM_NAME } from '../api/capi.js';
import type { Node } from '../api/core.js';
import { nodeReady } from '../api/core.js';
import { INFRA_VERSION } from '../api/hcs.js';
import { getShared, listShared } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import type { KubeObject, ObjectRef, OwnerReference } from '../kube/types.js';
import { controllerOf, isDeleting, keyOf, ownerRef } from '../kube/types.js';
import { objectFilter } from '../kube/selectors.js';
import type { Controller, Result } from '../runtime/manager.js';
import type { ControllerContext, Logger } from '../runtime/context.js';
import { machinesToDelete } from './delete-policy.js';
import { CAPI_DEPLOYMENT, sameJson, groupOf, keyFor, markFalse, markTrue, splitKey } from './util.js';

/** Upstream DisableMachineCreateAnnotation: set to "true" by the MachineDeployment on old MachineSets with the OnDelete strategy. */
export const ANN_DISABLE_MACHINE_CREATE = 'cluster.x-k8s.io/disable-machine-create';

export const MACHINESET_CONTROLLER = 'capi-machineset';

interface TemplateObject extends KubeObject {
  spec?: { template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: unknown } };
}

class TemplateMissingError extends Error {
  constructor(
    readonly ref: ObjectReference,
    readonly what: 'bootstrap' | 'infrastructure',
  ) {
    super(`${what} template ${ref.kind} ${ref.name} not found`);
  }
}

/**
 * Machines by namespace and controller owner uid (those without a controller
 * under ''), kept from the Machine watch like a controller-runtime cache
 * index. `candidates(ns, uid)` are the Machines a MachineSet's list can keep
 * (controlled by it, or orphans it may adopt), in the store's list order; the
 * label selector is then applied to them exactly as the list applies it. Only
 * for clients with a synchronous snapshot (the embedded store), taken right
 * before the watch starts, so snapshot plus watch see every version once.
 */
export class MachineOwnerIndex {
  private readonly groups = new Map<string, Map<string, Readonly<Machine>>>();
  private readonly groupOf = new Map<string, string>();
  /** Per group, its keys in list order (the embedded store's: localeCompare), kept by binary insertion. */
  private readonly sorted = new Map<string, string[]>();

  constructor(machines: readonly Readonly<Machine>[]) {
    for (const m of machines) this.apply('ADDED', m);
  }

  private static group(namespace: string | undefined, uid: string): string {
    return `${namespace ?? ''}\u0000${uid}`;
  }

  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', m: Readonly<Machine>): void {
    const k = keyOf(m.metadata);
    const g = type === 'DELETED' ? undefined : MachineOwnerIndex.group(m.metadata.namespace, controllerOf(m)?.uid ?? '');
    const old = this.groupOf.get(k);
    if (old !== undefined && old !== g) {
      this.groups.get(old)?.delete(k);
      const keys = this.sorted.get(old);
      if (keys) {
        const at = MachineOwnerIndex.position(keys, k);
        if (keys[at] === k) keys.splice(at, 1);
      }
      this.groupOf.delete(k);
    }
    if (g === undefined) return;
    let grp = this.groups.get(g);
    if (!grp) this.groups.set(g, (grp = new Map()));
    if (!grp.has(k)) {
      let keys = this.sorted.get(g);
      if (!keys) this.sorted.set(g, (keys = []));
      keys.splice(MachineOwnerIndex.position(keys, k), 0, k);
    }
    grp.set(k, m);
    this.groupOf.set(k, g);
  }

  /** First position in `keys` (sorted with localeCompare) whose key is not before `k`. */
  private static position(keys: readonly string[], k: string): number {
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keys[mid]!.localeCompare(k) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private inOrder(g: string): Readonly<Machine>[] {
    const grp = this.groups.get(g);
    const keys = this.sorted.get(g);
    if (!grp || !keys) return [];
    return keys.map((k) => grp.get(k)!);
  }

  /** Machines controlled by `uid` and, with `orphans`, those without a controller, in list order. */
  candidates(namespace: string, uid: string, orphans: boolean): Readonly<Machine>[] {
    const own = this.inOrder(MachineOwnerIndex.group(namespace, uid));
    const free = orphans ? this.inOrder(MachineOwnerIndex.group(namespace, '')) : [];
    if (free.length === 0) return own;
    const out: Readonly<Machine>[] = [];
    let i = 0;
    let j = 0;
    while (i < own.length || j < free.length) {
      if (j >= free.length || (i < own.length && keyOf(own[i]!.metadata).localeCompare(keyOf(free[j]!.metadata)) < 0)) out.push(own[i++]!);
      else out.push(free[j++]!);
    }
    return out;
  }
}

/** Last selector verdict per stored Machine version (see machinesOf). */
const selectorMatches = new WeakMap<object, { sel: string; ok: boolean }>();

export class MachineSetReconciler implements Controller {
  readonly name = MACHINESET_CONTROLLER;
  /** Sums many children: coalesce bursts of child events (see Controller.coalesce). */
  readonly coalesce = true;
  private readonly log: Logger;
  /** Set by setupMachineSetController when the client can take a synchronous snapshot. */
  index: MachineOwnerIndex | undefined;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logs.logger(CAPI_DEPLOYMENT, 'machineset');
  }

  /**
   * The list `listShared(Machine, {namespace, labelSelector: selector})` with
   * the Machines controlled by another owner left out (and, without
   * `orphans`, those without a controller): from the index when there is one.
   */
  private async machinesOf(ms: MachineSet, namespace: string, selector: Record<string, string>, orphans: boolean): Promise<Readonly<Machine>[]> {
    const uid = ms.metadata.uid ?? '';
    const keep = (m: Readonly<Machine>): boolean => {
      const c = controllerOf(m);
      return c ? c.uid === uid : orphans;
    };
    if (!this.index) return (await listShared<Machine>(this.ctx.mgmt, 'Machine', { namespace, labelSelector: selector })).filter(keep);
    // The index groups by controller uid already (that is `keep`); the selector is matched as the list matches it,
    // remembered per stored Machine version (frozen, so its labels never change) and selector.
    const match = objectFilter('Machine', { namespace, labelSelector: selector });
    if (!match) return this.index.candidates(namespace, uid, orphans);
    const sel = JSON.stringify(selector);
    return this.index.candidates(namespace, uid, orphans).filter((m) => {
      const hit = selectorMatches.get(m);
      if (hit?.sel === sel) return hit.ok;
      const ok = match(m);
      if (Object.isFrozen(m)) selectorMatches.set(m, { sel, ok });
      return ok;
    });
  }

  async reconcile(key: string): Promise<Result | void> {
    const { namespace, name } = splitKey(key);
    let ms = await this.ctx.mgmt.get<MachineSet>({ kind: 'MachineSet', namespace, name });
    if (!ms || isDeleting(ms)) return;
    const cluster = await this.ctx.mgmt.get<Cluster>({ kind: 'Cluster', namespace, name: ms.spec.clusterName });
    if (cluster?.spec.paused) return;

    // Keep selector, template and object in the same cluster (upstream mutates these on every reconcile).
    const cn = ms.spec.clusterName;
    if (
      ms.metadata.labels?.[LABEL_CLUSTER_NAME] !== cn ||
      ms.spec.selector.matchLabels?.[LABEL_CLUSTER_NAME] !== cn ||
      ms.spec.template.metadata?.labels?.[LABEL_CLUSTER_NAME] !== cn
    ) {
      ms.metadata.labels = { ...(ms.metadata.labels ?? {}), [LABEL_CLUSTER_NAME]: cn };
      ms.spec.selector.matchLabels = { ...(ms.spec.selector.matchLabels ?? {}), [LABEL_CLUSTER_NAME]: cn };
      ms.spec.template.metadata = { ...(ms.spec.template.metadata ?? {}), labels: { ...(ms.spec.template.metadata?.labels ?? {}), [LABEL_CLUSTER_NAME]: cn } };
      ms = await this.ctx.mgmt.update(ms);
    }

    const selector = ms.spec.selector.matchLabels ?? {};
    const all = await this.machinesOf(ms, namespace, selector, true);
    const machines: Machine[] = [];
    for (const m of all) {
      const c = controllerOf(m);
      if (c && c.uid !== ms.metadata.uid) continue;
      if (!c && !isDeleting(m)) {
        await this.ctx.mgmt.update({ ...m, metadata: { ...m.metadata, ownerReferences: [...(m.metadata.ownerReferences ?? []), ownerRef(ms)] } });
        await this.ctx.recorder.record('capi', 'machineset-controller', ms, 'Normal', 'SuccessfulAdopt', `Adopted Machine "${m.metadata.name}"`);
      }
      machines.push(m);
    }

    const status: MachineSetStatus = structuredClone(ms.status ?? {});
    let result: Result | void = undefined;
    try {
      await this.syncReplicas(ms, machines, status);
    } catch (e) {
      if (!(e instanceof TemplateMissingError)) throw e;
      const reason = e.what === 'bootstrap' ? 'BootstrapTemplateCloningFailed' : 'InfrastructureTemplateCloningFailed';
      status.conditions = markFalse(status.conditions, 'MachinesCreated', reason, 'Error', e.message, this.ctx.clock.now());
      await this.ctx.recorder.record('capi', 'machineset-controller', ms, 'Warning', reason, `${e.message}; cannot create Machines until it exists (RB-3)`, ['RB-3']);
      this.log.error('cannot clone template', { machineset: key, template: e.ref.name });
      result = { requeueAfter: 30_000 };
    }

    const machinesNow = await this.machinesOf(ms, namespace, selector, false);
    await this.updateStatus(ms, machinesNow, status);
    if (result) return result;
    const replicas = ms.spec.replicas ?? 0;
    if ((ms.spec.minReadySeconds ?? 0) > 0 && status.readyReplicas === replicas && status.availableReplicas !== replicas) {
      return { requeueAfter: (ms.spec.minReadySeconds ?? 0) * 1000 };
    }
    if (status.readyReplicas !== replicas) return { requeueAfter: 15_000 };
  }

  private async syncReplicas(ms: MachineSet, machines: Machine[], status: MachineSetStatus): Promise<void> {
    const want = ms.spec.replicas ?? 0;
    const diff = machines.length - want;
    const now = this.ctx.clock.now();
    if (diff < 0 && ms.metadata.annotations?.[ANN_DISABLE_MACHINE_CREATE] === 'true') {
      // Old MachineSet of an OnDelete deployment: Machines deleted by the user are not replaced here.
      this.log.info('Machine creation disabled by annotation', { machineset: keyFor(ms), need: want, have: machines.length });
    } else if (diff < 0) {
      this.log.info('Too few replicas', { machineset: keyFor(ms), need: want, creating: -diff });
      for (let i = 0; i < -diff; i++) await this.createMachine(ms);
      status.conditions = markTrue(status.conditions, 'MachinesCreated', now);
    } else if (diff > 0) {
      const victims = machinesToDelete(machines, diff, ms.spec.deletePolicy, now);
      this.log.info('Too many replicas', { machineset: keyFor(ms), need: want, deleting: diff, policy: ms.spec.deletePolicy ?? 'Random' });
      for (const m of victims) {
        if (isDeleting(m)) continue;
        await this.ctx.mgmt.delete({ kind: 'Machine', namespace: m.metadata.namespace, name: m.metadata.name }, { ignoreNotFound: true });
        this.ctx.events.record({
          source: 'capi',
          type: 'machineset.machine-deleted',
          message: `MachineSet ${keyFor(ms)} deletes Machine ${m.metadata.name} (policy ${ms.spec.deletePolicy ?? 'Random'})`,
          data: { machineset: ms.metadata.name, machine: m.metadata.name, policy: ms.spec.deletePolicy ?? 'Random' },
          rules: ['MD-4'],
        });
        await this.ctx.recorder.record('capi', 'machineset-controller', ms, 'Normal', 'SuccessfulDelete', `Deleted machine "${m.metadata.name}"`);
      }
    }
  }

  private async createMachine(ms: MachineSet): Promise<void> {
    const namespace = ms.metadata.namespace ?? 'default';
    const name = `${ms.metadata.name}-${this.ctx.rng.string(5)}`;
    const tpl = ms.spec.template;
    const labels: Record<string, string> = { ...(tpl.metadata?.labels ?? {}), [LABEL_SET_NAME]: ms.metadata.name, [LABEL_CLUSTER_NAME]: ms.spec.clusterName };
    const mdOwner = controllerOf(ms);
    if (mdOwner?.kind === 'MachineDeployment') labels[LABEL_DEPLOYMENT_NAME] = mdOwner.name;
    const annotations = { ...(tpl.metadata?.annotations ?? {}) };
    const msRef: OwnerReference = { apiVersion: ms.apiVersion || CAPI_VERSION, kind: 'MachineSet', name: ms.metadata.name, uid: ms.metadata.uid! };

    const created: KubeObject[] = [];
    const cleanup = async (): Promise<void> => {
      for (const o of created) await this.ctx.mgmt.delete({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name }, { ignoreNotFound: true });
    };
    let bootstrapRef: ObjectReference | undefined;
    try {
      if (tpl.spec.bootstrap?.configRef) {
        const clone = await this.cloneTemplate(tpl.spec.bootstrap.configRef, name, namespace, ms.spec.clusterName, labels, annotations, msRef, 'bootstrap', BOOTSTRAP_VERSION);
        created.push(clone);
        bootstrapRef = { apiVersion: clone.apiVersion, kind: clone.kind, name: clone.metadata.name, namespace };
      }
      const infra = await this.cloneTemplate(tpl.spec.infrastructureRef, name, namespace, ms.spec.clusterName, labels, annotations, msRef, 'infrastructure', INFRA_VERSION);
      created.push(infra);
      const machine: Machine = {
        apiVersion: CAPI_VERSION,
        kind: 'Machine',
        metadata: { name, namespace, labels, ...(Object.keys(annotations).length ? { annotations } : {}), ownerReferences: [ownerRef(ms)] },
        spec: {
          ...structuredClone(tpl.spec),
          clusterName: ms.spec.clusterName,
          bootstrap: { ...(tpl.spec.bootstrap ?? {}), ...(bootstrapRef ? { configRef: bootstrapRef } : {}) },
          infrastructureRef: { apiVersion: infra.apiVersion, kind: infra.kind, name: infra.metadata.name, namespace },
        },
      };
      await this.ctx.mgmt.create(machine);
    } catch (e) {
      await cleanup();
      if (e instanceof TemplateMissingError) throw e;
      await this.ctx.recorder.record('capi', 'machineset-controller', ms, 'Warning', 'FailedCreate', `Failed to create machine "${name}": ${e instanceof Error ? e.message : String(e)}`);
      throw e;
    }
    this.ctx.events.record({
      source: 'capi',
      type: 'machineset.machine-created',
      message: `MachineSet ${keyFor(ms)} created Machine ${name}`,
      data: { machineset: ms.metadata.name, machine: name },
    });
    await this.ctx.recorder.record('capi', 'machineset-controller', ms, 'Normal', 'SuccessfulCreate', `Created machine "${name}"`);
  }

  /** external.CloneTemplate / GenerateTemplate. */
  private async cloneTemplate(
    ref: ObjectReference,
    name: string,
    namespace: string,
    clusterName: string,
    labels: Record<string, string>,
    annotations: Record<string, string>,
    owner: OwnerReference,
    what: 'bootstrap' | 'infrastructure',
    defaultApiVersion: string,
  ): Promise<KubeObject> {
    if (!ref.kind) throw new Error(`${what} reference ${ref.name} has no kind`);
    const template = await this.ctx.mgmt.get<TemplateObject>({ kind: ref.kind, namespace: ref.namespace ?? namespace, name: ref.name });
    if (!template) throw new TemplateMissingError(ref, what);
    const inner = template.spec?.template ?? {};
    const apiVersion = ref.apiVersion ?? template.apiVersion ?? defaultApiVersion;
    const obj: KubeObject = {
      apiVersion,
      kind: ref.kind.replace(/Template$/, ''),
      metadata: {
        name,
        namespace,
        labels: { ...(inner.metadata?.labels ?? {}), ...labels, [LABEL_CLUSTER_NAME]: clusterName },
        annotations: {
          ...(inner.metadata?.annotations ?? {}),
          ...annotations,
          [ANNOTATION_CLONED_FROM_NAME]: ref.name,
          [ANNOTATION_CLONED_FROM_GROUPKIND]: `${ref.kind}.${groupOf(apiVersion)}`,
        },
        ownerReferences: [owner],
      },
      spec: structuredClone(inner.spec ?? {}),
    };
    return this.ctx.mgmt.create(obj);
  }

  private async updateStatus(ms: MachineSet, machines: Machine[], status: MachineSetStatus): Promise<void> {
    const now = this.ctx.clock.now();
    const tplLabels = ms.spec.template.metadata?.labels ?? {};
    let fully = 0;
    let ready = 0;
    let available = 0;
    const workload = this.ctx.workloads.client(ms.metadata.namespace ?? 'default', ms.spec.clusterName);
    // The embedded store answers synchronously: no await (one microtask) per Machine; same object as getShared.
    const sync = (workload as { getSharedSync?: (ref: ObjectRef) => Readonly<Node> | undefined }).getSharedSync?.bind(workload);
    // labelsMatch(m.metadata.labels, tplLabels), with the template's labels listed once per reconcile.
    const tplEntries = Object.entries(tplLabels);
    const minReady = (ms.spec.minReadySeconds ?? 0) * 1000;
    for (const m of machines) {
      const labels = m.metadata.labels;
      let labelled = true;
      for (const [k, v] of tplEntries) {
        if (labels?.[k] !== v) {
          labelled = false;
          break;
        }
      }
      if (labelled) fully++;
      if (!m.status?.nodeRef) continue;
      let node: Node | undefined;
      try {
        const ref: ObjectRef = { kind: 'Node', name: m.status.nodeRef.name };
        node = sync ? sync(ref) : await getShared<Node>(workload, ref);
      } catch (e) {
        if (!isNotFound(e)) this.log.error('Unable to retrieve Node status', { machine: m.metadata.name, err: String(e) });
      }
      if (!node || !nodeReady(node)) continue;
      ready++;
      // Deviation (docs/capi.md): a Machine being deleted (its Node cordoned and drained) is not
      // counted as available, so that a slow infrastructure deletion cannot make the rollout
      // scale old MachineSets below spec.replicas - maxUnavailable.
      if (isDeleting(m)) continue;
      if (minReady === 0) {
        available++;
        continue;
      }
      const since = node.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime;
      if (minReady === 0 || (since !== undefined && now - Date.parse(since) >= minReady)) available++;
    }
    const want = ms.spec.replicas ?? 0;
    status.selector = Object.entries(ms.spec.selector.matchLabels ?? {})
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    status.replicas = machines.length;
    status.fullyLabeledReplicas = fully;
    status.readyReplicas = ready;
    status.availableReplicas = available;
    status.observedGeneration = ms.metadata.generation;
    if (machines.length < want) {
      status.conditions = markFalse(status.conditions, 'Resized', 'ScalingUp', 'Warning', `Scaling up MachineSet to ${want} replicas (actual ${machines.length})`, now);
    } else if (machines.length > want) {
      status.conditions = markFalse(status.conditions, 'Resized', 'ScalingDown', 'Warning', `Scaling down MachineSet to ${want} replicas (actual ${machines.length})`, now);
    } else if (ready === machines.length) {
      status.conditions = markTrue(status.conditions, 'Resized', now);
    }
    const created = status.conditions?.find((c) => c.type === 'MachinesCreated');
    const resized = status.conditions?.find((c) => c.type === 'Resized');
    const ok = created?.status !== 'False' && resized?.status !== 'False' && ready === machines.length;
    status.conditions = ok
      ? markTrue(status.conditions, 'Ready', now)
      : markFalse(status.conditions, 'Ready', created?.status === 'False' ? created.reason ?? 'MachinesNotCreated' : 'ScalingOrWaitingForNodes', 'Warning', `${ready}/${machines.length} Machines ready`, now);
    if (sameJson(status, ms.status ?? {})) return;
    await this.ctx.mgmt.updateStatus<MachineSet>({ ...ms, status });
  }
}

export function setupMachineSetController(ctx: ControllerContext): MachineSetReconciler {
  const r = new MachineSetReconciler(ctx);
  ctx.manager.register(r);
  ctx.mgmt.watch<MachineSet>('MachineSet', (e) => ctx.manager.enqueue(MACHINESET_CONTROLLER, keyFor(e.object)), { shared: true });
  const snapshot = (ctx.mgmt as { listSharedSync?: (kind: string) => readonly Readonly<Machine>[] }).listSharedSync;
  const index = typeof snapshot === 'function' ? new MachineOwnerIndex(snapshot.call(ctx.mgmt, 'Machine')) : undefined;
  r.index = index;
  ctx.mgmt.watch<Machine>('Machine', (e) => {
    index?.apply(e.type, e.object);
    const owner = controllerOf(e.object);
    if (owner?.kind === 'MachineSet') ctx.manager.enqueue(MACHINESET_CONTROLLER, `${e.object.metadata.namespace ?? 'default'}/${owner.name}`);
  }, { shared: true });
  return r;
}
