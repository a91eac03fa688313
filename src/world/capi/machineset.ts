/**
 * MachineSet controller, modelled on cluster-api v1.10.10
 * internal/controllers/machineset/machineset_controller.go:
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
 * created while the annotation cluster.x-k8s.io/disable-machine-create is
 * present (old MachineSets of an OnDelete MachineDeployment), nor while a
 * scale-up preflight check fails (machineset-preflight.ts,
 * machineset_preflight.go: control plane provisioning or upgrading, version
 * skew), re-checked every 15 s.
 */
import { BOOTSTRAP_VERSION, CAPI_VERSION, LABEL_CLUSTER_NAME, LABEL_DEPLOYMENT_NAME, LABEL_SET_NAME } from '../../product/api/capi.js';
import type { Cluster, Machine, MachineSet, MachineSetStatus, ObjectReference } from '../../product/api/capi.js';
import { ANNOTATION_CLONED_FROM_GROUPKIND, ANNOTATION_CLONED_FROM_NAME } from '../../product/api/capi.js';
import type { Node } from '../../product/api/core.js';
import { nodeReady } from '../../product/api/core.js';
import { INFRA_VERSION } from '../../product/api/hcs.js';
import { getShared, listShared, type KubeClient } from '../../core/kube/client.js';
import { isNotFound } from '../../core/kube/errors.js';
import type { KubeObject, ObjectRef, OwnerReference } from '../../core/kube/types.js';
import { compareKeys, controllerOf, isDeleting, keyOf, ownerRef, setSortedKey } from '../../core/kube/types.js';
import { objectFilter } from '../../core/kube/selectors.js';
import type { Controller, Result } from '../../core/runtime/manager.js';
import type { ControllerContext, Logger } from '../../core/runtime/context.js';
import { machinesToDelete } from './delete-policy.js';
import { PREFLIGHT_FAILED_REQUEUE_MS, scaleUpPreflightChecks, type ControlPlaneView } from './machineset-preflight.js';
import { CAPI_DEPLOYMENT, generatedName, mustFormatLabelValue, sameJson, groupOf, keyFor, markFalse, markTrue, splitKey } from './util.js';

/**
 * Most Machines one reconcile creates or deletes; the rest follow in the next
 * reconciles (the Machine watch requeues the MachineSet). A testbed bound, not
 * Cluster API's: upstream syncReplicas creates all `diff` Machines in one loop
 * (cluster-api internal/controllers/machineset/machineset_controller.go,
 * syncReplicas / createMachines: `for i := range diff`); on a real cluster that
 * loop is paced by the manager's client rate limiter (--kube-api-qps 20,
 * --kube-api-burst 30) and runs in another process than the apiserver. Here
 * controllers and the facade share one event loop, so a valid but huge
 * spec.replicas (2147483647) must not become one unbounded reconcile. The value
 * is the ReplicaSet controller's burstReplicas (kubernetes
 * pkg/controller/replicaset/replica_set.go: BurstReplicas = 500, at most that
 * many Pods created or deleted per sync): below it nothing changes.
 */
export const MACHINESET_BURST = 500;

/**
 * Requests per second of the Cluster API manager's client (cluster-api v1.10
 * main.go: --kube-api-qps, default 20): upstream's createMachines loop is
 * paced by it. Here it paces what follows a full burst: when more than
 * MACHINESET_BURST Machines are missing, the next burst waits
 * MACHINESET_BURST / CAPI_CLIENT_QPS seconds (25 s) of virtual time, so a
 * huge spec.replicas never holds the clock at one instant (issue 32: the
 * clock stood still for 226 s during the backlog). Below a burst nothing
 * waits, so no scenario's event log changes.
 */
export const CAPI_CLIENT_QPS = 20;
export const MACHINESET_BURST_PACE_MS = (MACHINESET_BURST / CAPI_CLIENT_QPS) * 1000;

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
  /** Per group, its keys in list order (the store's: key byte order, compareKeys), kept by binary insertion. */
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
      if (keys) setSortedKey(keys, k, false);
      this.groupOf.delete(k);
    }
    if (g === undefined) return;
    let grp = this.groups.get(g);
    if (!grp) this.groups.set(g, (grp = new Map()));
    if (!grp.has(k)) {
      let keys = this.sorted.get(g);
      if (!keys) this.sorted.set(g, (keys = []));
      setSortedKey(keys, k, true);
    }
    grp.set(k, m);
    this.groupOf.set(k, g);
  }

  private inOrder(g: string): Readonly<Machine>[] {
    const grp = this.groups.get(g);
    const keys = this.sorted.get(g);
    if (!grp || !keys) return [];
    return keys.map((k) => grp.get(k)!);
  }

  /** The Machine stored under `key` ("ns/name"), as last seen by the watch. */
  get(key: string): Readonly<Machine> | undefined {
    const g = this.groupOf.get(key);
    return g === undefined ? undefined : this.groups.get(g)?.get(key);
  }

  /** Machines without a controller in `namespace`, in list order. */
  orphans(namespace: string): Readonly<Machine>[] {
    return this.inOrder(MachineOwnerIndex.group(namespace, ''));
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
      if (j >= free.length || (i < own.length && compareKeys(keyOf(own[i]!.metadata), keyOf(free[j]!.metadata)) < 0)) out.push(own[i++]!);
      else out.push(free[j++]!);
    }
    return out;
  }
}

/** A MachineSet's status counts over its Machines (upstream updateStatus). `deleting` feeds syncReplicas. */
export interface MachineSetCounts {
  replicas: number;
  fullyLabeled: number;
  ready: number;
  available: number;
  deleting: number;
}

/** The Node a Machine's nodeRef names, as the status walk reads it (synchronously or not). */
export type NodeLookup = (m: Readonly<Machine>, name: string) => Readonly<Node> | undefined | Promise<Readonly<Node> | undefined>;

/**
 * The full status walk: every Machine, its Node. A Machine is fully labelled
 * when it carries the template's labels; ready when its Node is Ready;
 * available when ready for minReadySeconds, being deleted or not (v1.10.10
 * machineset_controller.go updateStatus counts a Machine being deleted, its
 * Node cordoned and drained but still Ready, as ready and available; the
 * v1beta2 counters of later versions do not).
 */
export async function walkStatusCounts(machines: readonly Readonly<Machine>[], tplLabels: Record<string, string>, minReadyMs: number, now: number, nodeOf: NodeLookup): Promise<MachineSetCounts> {
  // labelsMatch(m.metadata.labels, tplLabels), with the template's labels listed once per walk.
  const tplEntries = Object.entries(tplLabels);
  const c: MachineSetCounts = { replicas: machines.length, fullyLabeled: 0, ready: 0, available: 0, deleting: 0 };
  for (const m of machines) {
    if (isDeleting(m)) c.deleting++;
    const labels = m.metadata.labels;
    let labelled = true;
    for (const [k, v] of tplEntries) {
      if (labels?.[k] !== v) {
        labelled = false;
        break;
      }
    }
    if (labelled) c.fullyLabeled++;
    if (!m.status?.nodeRef) continue;
    // A synchronous lookup (the embedded store) costs no await, i.e. no microtask, per Machine.
    const r = nodeOf(m, m.status.nodeRef.name);
    const node = r instanceof Promise ? await r : r;
    if (!node || !nodeReady(node)) continue;
    c.ready++;
    if (minReadyMs === 0) {
      c.available++;
      continue;
    }
    const since = node.status?.conditions?.find((x) => x.type === 'Ready')?.lastTransitionTime;
    if (since !== undefined && now - Date.parse(since) >= minReadyMs) c.available++;
  }
  return c;
}

/** What one Machine adds to its MachineSet's counts (minReadySeconds 0: available = ready). */
interface Contribution {
  fully: boolean;
  ready: boolean;
  deleting: boolean;
  node: string | undefined;
}

/** One MachineSet's counts, kept for the selector, template labels and cluster it was built for. */
class SetCounts {
  readonly members = new Map<string, Contribution>();
  readonly dirty = new Set<string>();
  /** Node name -> member keys whose nodeRef names it. */
  readonly nodeRefs = new Map<string, Set<string>>();
  readonly counts: MachineSetCounts = { replicas: 0, fullyLabeled: 0, ready: 0, available: 0, deleting: 0 };
  constructor(
    readonly uid: string,
    readonly namespace: string,
    readonly cluster: string,
    readonly spec: string,
    readonly selector: (m: Readonly<Machine>) => boolean,
    readonly tplEntries: readonly [string, string][],
  ) {}

  add(k: string, c: Contribution, sign: 1 | -1): void {
    const n = this.counts;
    n.replicas += sign;
    if (c.fully) n.fullyLabeled += sign;
    if (c.deleting) n.deleting += sign;
    if (c.ready) n.ready += sign;
    if (c.ready) n.available += sign;
    if (c.node === undefined) return;
    let refs = this.nodeRefs.get(c.node);
    if (sign > 0) {
      if (!refs) this.nodeRefs.set(c.node, (refs = new Set()));
      refs.add(k);
    } else if (refs) {
      refs.delete(k);
      if (refs.size === 0) this.nodeRefs.delete(c.node);
    }
  }
}

/** The synchronous reads the counter needs from a workload cluster's client (KubeClient.getSharedSync, the embedded store). */
export type SyncNodeReader = Required<Pick<KubeClient, 'getSharedSync'>>;

/**
 * MachineSet status counts kept incrementally, like an informer-fed cache:
 * the Machine watch (after the owner index has applied the event) marks the
 * Machine dirty in the set it was counted in and the set of its controller;
 * a workload cluster's Node watch marks the Machines whose nodeRef names that
 * Node. `counts` recounts the dirty Machines only (reading each one from the
 * index and its Node synchronously, as the walk does), so it is O(changed)
 * per reconcile; every other Machine's contribution depends only on its own
 * stored version, its Node's stored version, the template labels, the
 * selector and the cluster, none of which changed (a change of the latter
 * three rebuilds the set). With minReadySeconds > 0 availability depends on
 * the clock: callers walk instead. Only for clients whose watches deliver
 * every write synchronously (the embedded store), with snapshot reads.
 */
export class MachineSetStatusCounter {
  private readonly sets = new Map<string, SetCounts>();
  /** Machine key -> the set it is currently counted in. */
  private readonly memberOf = new Map<string, SetCounts>();
  /** Workload cluster key -> its sets (for the Node watch). */
  private readonly byCluster = new Map<string, Set<SetCounts>>();

  constructor(private readonly index: MachineOwnerIndex) {}

  /** A Machine watch event, delivered after `index.apply` of the same event. */
  onMachine(m: Readonly<Machine>): void {
    const k = keyOf(m.metadata);
    this.memberOf.get(k)?.dirty.add(k);
    const uid = controllerOf(m)?.uid;
    if (uid !== undefined) this.sets.get(uid)?.dirty.add(k);
  }

  /** A Node watch event of workload cluster `cluster` ("ns/name"). */
  onNode(cluster: string, name: string): void {
    for (const s of this.byCluster.get(cluster) ?? []) {
      for (const k of s.nodeRefs.get(name) ?? []) s.dirty.add(k);
    }
  }

  /** Whether counts for this workload cluster have been asked for (its Node watch is then needed). */
  knows(cluster: string): boolean {
    return this.byCluster.has(cluster);
  }

  /** The MachineSet is gone: stop keeping its counts. */
  forget(uid: string): void {
    const s = this.sets.get(uid);
    if (!s) return;
    this.sets.delete(uid);
    this.byCluster.get(s.cluster)?.delete(s);
    for (const k of s.members.keys()) if (this.memberOf.get(k) === s) this.memberOf.delete(k);
  }

  /**
   * The counts `walkStatusCounts` gives now over the Machines the MachineSet
   * controls that match its selector, with minReadySeconds 0.
   */
  counts(ms: Readonly<MachineSet>, cluster: string, workload: SyncNodeReader): MachineSetCounts {
    const uid = ms.metadata.uid ?? '';
    const namespace = ms.metadata.namespace ?? 'default';
    const selector = ms.spec.selector.matchLabels ?? {};
    const tplLabels = ms.spec.template.metadata?.labels ?? {};
    const spec = JSON.stringify([namespace, cluster, selector, tplLabels]);
    let s = this.sets.get(uid);
    if (s && s.spec !== spec) {
      this.forget(uid);
      s = undefined;
    }
    if (!s) {
      const match = objectFilter('Machine', { namespace, labelSelector: selector });
      s = new SetCounts(uid, namespace, cluster, spec, match ?? (() => true), Object.entries(tplLabels));
      this.sets.set(uid, s);
      let group = this.byCluster.get(cluster);
      if (!group) this.byCluster.set(cluster, (group = new Set()));
      group.add(s);
      for (const m of this.index.candidates(namespace, uid, false)) s.dirty.add(keyOf(m.metadata));
    }
    for (const k of s.dirty) this.recount(s, k, workload);
    s.dirty.clear();
    return { ...s.counts };
  }

  private recount(s: SetCounts, k: string, workload: SyncNodeReader): void {
    const was = s.members.get(k);
    if (was) {
      s.add(k, was, -1);
      s.members.delete(k);
      if (this.memberOf.get(k) === s) this.memberOf.delete(k);
    }
    const m = this.index.get(k);
    if (!m || m.metadata.namespace !== s.namespace || controllerOf(m)?.uid !== s.uid || !s.selector(m)) return;
    const labels = m.metadata.labels;
    let fully = true;
    for (const [lk, v] of s.tplEntries) {
      if (labels?.[lk] !== v) {
        fully = false;
        break;
      }
    }
    const node = m.status?.nodeRef?.name;
    const n = node === undefined ? undefined : workload.getSharedSync<Node>({ kind: 'Node', name: node });
    const c: Contribution = { fully, ready: !!n && nodeReady(n), deleting: isDeleting(m), node };
    s.members.set(k, c);
    s.add(k, c, 1);
    this.memberOf.set(k, s);
  }
}

/** The replicas syncReplicas works from: the Machines themselves, or (with kept counts) how many and how many are being deleted. */
interface Replicas {
  count: number;
  deleting: number;
  machines?: Machine[];
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
  /** Set with the index: status counts kept from the Machine and Node watches. */
  counter: MachineSetStatusCounter | undefined;
  /** MachineSet key -> virtual time before which no further burst of creations starts (MACHINESET_BURST_PACE_MS). */
  private readonly nextBurst = new Map<string, number>();

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
    return this.selected(this.index.candidates(namespace, uid, orphans), namespace, selector);
  }

  /** `machines` matching the selector as the list matches it, remembered per stored Machine version (frozen) and selector. */
  private selected(machines: Readonly<Machine>[], namespace: string, selector: Record<string, string>): Readonly<Machine>[] {
    const match = objectFilter('Machine', { namespace, labelSelector: selector });
    if (!match) return machines;
    const sel = JSON.stringify(selector);
    return machines.filter((m) => {
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
    const cluster: Cluster | undefined = await getShared<Cluster>(this.ctx.mgmt, { kind: 'Cluster', namespace, name: ms.spec.clusterName });
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
    const want = ms.spec.replicas ?? 0;
    // With kept counts, only the orphans are walked (to adopt them) unless the delete policy has to choose
    // among the Machines: see syncReplicas. Counts, orphans and the list are taken at the same instant (no await).
    const own = this.keptCounts(ms);
    const orphans = own && this.index ? this.selected(this.index.orphans(namespace), namespace, selector) : undefined;
    let have: Replicas | undefined;
    if (own && orphans) {
      const count = own.replicas + orphans.length;
      const deleting = own.deleting + orphans.filter((m) => isDeleting(m)).length;
      if (count - want <= deleting) have = { count, deleting };
    }
    const all = orphans && have ? orphans : await this.machinesOf(ms, namespace, selector, true);
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
      result = await this.syncReplicas(ms, cluster, have ?? { count: machines.length, deleting: 0, machines }, status);
    } catch (e) {
      if (!(e instanceof TemplateMissingError)) throw e;
      const reason = e.what === 'bootstrap' ? 'BootstrapTemplateCloningFailed' : 'InfrastructureTemplateCloningFailed';
      status.conditions = markFalse(status.conditions, 'MachinesCreated', reason, 'Error', e.message, this.ctx.clock.now());
      await this.ctx.recorder.record('capi', 'machineset-controller', ms, 'Warning', reason, `${e.message}; cannot create Machines until it exists (RB-3)`, ['RB-3']);
      this.log.error('cannot clone template', { machineset: key, template: e.ref.name });
      result = { requeueAfter: 30_000 };
    }

    await this.updateStatus(ms, await this.statusCounts(ms, namespace, selector), status);
    if (result) return result;
    const replicas = ms.spec.replicas ?? 0;
    if ((ms.spec.minReadySeconds ?? 0) > 0 && status.readyReplicas === replicas && status.availableReplicas !== replicas) {
      return { requeueAfter: (ms.spec.minReadySeconds ?? 0) * 1000 };
    }
    if (status.readyReplicas !== replicas) return { requeueAfter: 15_000 };
  }

  private async syncReplicas(ms: MachineSet, cluster: Cluster | undefined, have: Replicas, status: MachineSetStatus): Promise<Result | void> {
    const want = ms.spec.replicas ?? 0;
    const diff = have.count - want;
    const now = this.ctx.clock.now();
    if (diff >= 0) this.nextBurst.delete(keyFor(ms));
    if (diff < 0 && ms.metadata.annotations && ANN_DISABLE_MACHINE_CREATE in ms.metadata.annotations) {
      // Old MachineSet of an OnDelete deployment: Machines deleted by the user are not replaced here (upstream checks presence only).
      this.log.info('Machine creation disabled by annotation', { machineset: keyFor(ms), need: want, have: have.count });
    } else if (diff < 0 && (await this.preflightBlocks(ms, cluster, status))) {
      return { requeueAfter: PREFLIGHT_FAILED_REQUEUE_MS };
    } else if (diff < 0) {
      const key = keyFor(ms);
      const paced = this.nextBurst.get(key);
      if (paced !== undefined && now < paced) return { requeueAfter: paced - now };
      // More than a burst missing: the next one waits its share of the client's rate (CAPI_CLIENT_QPS).
      if (-diff > MACHINESET_BURST) this.nextBurst.set(key, now + MACHINESET_BURST_PACE_MS);
      else this.nextBurst.delete(key);
      const creating = Math.min(-diff, MACHINESET_BURST);
      this.log.info('Too few replicas', { machineset: keyFor(ms), need: want, creating });
      for (let i = 0; i < creating; i++) {
        await this.createMachine(ms);
        const turn = this.ctx.manager.yieldIfDue();
        if (turn) await turn;
      }
      status.conditions = markTrue(status.conditions, 'MachinesCreated', now);
    } else if (diff > 0) {
      // Without the list, at least `diff` of the Machines are being deleted: every policy ranks them first
      // (MUST_DELETE, above any other priority), so every victim would be one of them, and those are skipped below.
      const deleting = Math.min(diff, MACHINESET_BURST);
      const victims = have.machines ? machinesToDelete(have.machines, deleting, ms.spec.deletePolicy, now) : [];
      this.log.info('Too many replicas', { machineset: keyFor(ms), need: want, deleting, policy: ms.spec.deletePolicy ?? 'Random' });
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
        const turn = this.ctx.manager.yieldIfDue();
        if (turn) await turn;
      }
    }
  }

  /**
   * runPreflightChecks("Scale up"): true when a check fails; then
   * MachinesCreated is False with reason PreflightCheckFailed and the
   * messages, as upstream. A control plane that cannot be read is an error.
   */
  private async preflightBlocks(ms: MachineSet, cluster: Cluster | undefined, status: MachineSetStatus): Promise<boolean> {
    const ref = cluster?.spec.controlPlaneRef;
    let view: ControlPlaneView | undefined;
    if (ref?.kind) {
      const namespace = ref.namespace ?? ms.metadata.namespace ?? 'default';
      const cp = await getShared<KubeObject & { spec?: { version?: string }; status?: { version?: string } }>(this.ctx.mgmt, { kind: ref.kind, namespace, name: ref.name });
      if (!cp) throw new Error(`failed to perform "Scale up": failed to perform preflight checks: failed to get ControlPlane ${namespace}/${ref.name}: not found`);
      view = { kind: ref.kind, namespace, name: ref.name, specVersion: cp.spec?.version, statusVersion: cp.status?.version };
    }
    const failed = scaleUpPreflightChecks(ms, view);
    if (failed.length === 0) return false;
    const message = failed.join('; ');
    const was = status.conditions?.find((c) => c.type === 'MachinesCreated');
    if (was?.reason !== 'PreflightCheckFailed' || was.message !== message) {
      this.log.info(`Scale up on hold because ${message}. The operation will continue after the preflight check(s) pass`, { machineset: keyFor(ms) });
      this.ctx.events.record({
        source: 'capi',
        type: 'machineset.preflight-failed',
        message: `MachineSet ${keyFor(ms)} scale up on hold: ${message}`,
        data: { machineset: ms.metadata.name, checks: failed.map((f) => /"(\w+)" preflight check failed/.exec(f)?.[1] ?? '').join(',') },
      });
    }
    status.conditions = markFalse(status.conditions, 'MachinesCreated', 'PreflightCheckFailed', 'Error', message, this.ctx.clock.now());
    return true;
  }

  private async createMachine(ms: MachineSet): Promise<void> {
    const namespace = ms.metadata.namespace ?? 'default';
    const name = generatedName(ms.metadata.name, this.ctx.rng.string(5));
    const tpl = ms.spec.template;
    const labels: Record<string, string> = { ...(tpl.metadata?.labels ?? {}), [LABEL_SET_NAME]: mustFormatLabelValue(ms.metadata.name), [LABEL_CLUSTER_NAME]: ms.spec.clusterName };
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

  /**
   * The status counts over the Machines the MachineSet controls now: kept
   * incrementally (MachineSetStatusCounter) when the management client has an
   * owner index and the workload cluster answers synchronously, and
   * minReadySeconds is 0; otherwise the full walk.
   */
  private async statusCounts(ms: MachineSet, namespace: string, selector: Record<string, string>): Promise<MachineSetCounts> {
    const kept = this.keptCounts(ms);
    if (kept) return kept;
    const workload = this.ctx.workloads.client(ms.metadata.namespace ?? 'default', ms.spec.clusterName);
    const minReady = (ms.spec.minReadySeconds ?? 0) * 1000;
    const sync = workload.getSharedSync?.bind(workload);
    const machines = await this.machinesOf(ms, namespace, selector, false);
    const nodeOf = (m: Readonly<Machine>, name: string): Readonly<Node> | undefined | Promise<Readonly<Node> | undefined> => {
      const ref: ObjectRef = { kind: 'Node', name };
      const failed = (e: unknown): undefined => {
        if (!isNotFound(e)) this.log.error('Unable to retrieve Node status', { machine: m.metadata.name, err: String(e) });
        return undefined;
      };
      // The embedded store answers synchronously: no await (one microtask) per Machine; same object as getShared.
      if (sync) {
        try {
          return sync<Node>(ref);
        } catch (e) {
          return failed(e);
        }
      }
      return getShared<Node>(workload, ref).catch(failed);
    };
    return walkStatusCounts(machines, ms.spec.template.metadata?.labels ?? {}, minReady, this.ctx.clock.now(), nodeOf);
  }

  /**
   * The counts kept by the MachineSetStatusCounter, when it can keep them: an
   * owner index (synchronous management store), a workload cluster that
   * answers synchronously, minReadySeconds 0. Otherwise undefined.
   */
  private keptCounts(ms: MachineSet): MachineSetCounts | undefined {
    if (!this.counter) return undefined;
    const workload = this.ctx.workloads.client(ms.metadata.namespace ?? 'default', ms.spec.clusterName);
    const sync = workload.getSharedSync?.bind(workload);
    if (!sync || (ms.spec.minReadySeconds ?? 0) > 0) {
      if (ms.metadata.uid) this.counter.forget(ms.metadata.uid);
      return undefined;
    }
    const ck = `${ms.metadata.namespace ?? 'default'}/${ms.spec.clusterName}`;
    if (!this.counter.knows(ck)) {
      const counter = this.counter;
      workload.watch<Node>('Node', (e) => counter.onNode(ck, e.object.metadata.name), { shared: true });
    }
    return this.counter.counts(ms, ck, { getSharedSync: sync });
  }

  private async updateStatus(ms: MachineSet, counts: MachineSetCounts, status: MachineSetStatus): Promise<void> {
    const now = this.ctx.clock.now();
    const { replicas: total, fullyLabeled: fully, ready, available } = counts;
    const want = ms.spec.replicas ?? 0;
    status.selector = Object.entries(ms.spec.selector.matchLabels ?? {})
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    status.replicas = total;
    status.fullyLabeledReplicas = fully;
    status.readyReplicas = ready;
    status.availableReplicas = available;
    status.observedGeneration = ms.metadata.generation;
    if (total < want) {
      status.conditions = markFalse(status.conditions, 'Resized', 'ScalingUp', 'Warning', `Scaling up MachineSet to ${want} replicas (actual ${total})`, now);
    } else if (total > want) {
      status.conditions = markFalse(status.conditions, 'Resized', 'ScalingDown', 'Warning', `Scaling down MachineSet to ${want} replicas (actual ${total})`, now);
    } else if (ready === total) {
      status.conditions = markTrue(status.conditions, 'Resized', now);
    }
    const created = status.conditions?.find((c) => c.type === 'MachinesCreated');
    const resized = status.conditions?.find((c) => c.type === 'Resized');
    const ok = created?.status !== 'False' && resized?.status !== 'False' && ready === total;
    status.conditions = ok
      ? markTrue(status.conditions, 'Ready', now)
      : markFalse(status.conditions, 'Ready', created?.status === 'False' ? created.reason ?? 'MachinesNotCreated' : 'ScalingOrWaitingForNodes', 'Warning', `${ready}/${total} Machines ready`, now);
    if (sameJson(status, ms.status ?? {})) return;
    await this.ctx.mgmt.updateStatus<MachineSet>({ ...ms, status });
  }
}

export function setupMachineSetController(ctx: ControllerContext): MachineSetReconciler {
  const r = new MachineSetReconciler(ctx);
  ctx.manager.register(r);
  const snapshot = (ctx.mgmt as { listSharedSync?: (kind: string) => readonly Readonly<Machine>[] }).listSharedSync;
  const index = typeof snapshot === 'function' ? new MachineOwnerIndex(snapshot.call(ctx.mgmt, 'Machine')) : undefined;
  r.index = index;
  const counter = index ? new MachineSetStatusCounter(index) : undefined;
  r.counter = counter;
  ctx.mgmt.watch<MachineSet>('MachineSet', (e) => {
    if (e.type === 'DELETED' && e.object.metadata.uid) counter?.forget(e.object.metadata.uid);
    ctx.manager.enqueue(MACHINESET_CONTROLLER, keyFor(e.object));
  }, { shared: true });
  ctx.mgmt.watch<Machine>('Machine', (e) => {
    index?.apply(e.type, e.object);
    counter?.onMachine(e.object);
    const owner = controllerOf(e.object);
    if (owner?.kind === 'MachineSet') ctx.manager.enqueue(MACHINESET_CONTROLLER, `${e.object.metadata.namespace ?? 'default'}/${owner.name}`);
  }, { shared: true });
  return r;
}
