/**
 * MachineDeployment helpers, modelled on cluster-api v1.10.10
 * internal/controllers/machinedeployment/mdutil/util.go (itself derived from
 * kubernetes/pkg/controller/deployment/util): fenceposts, replica sums,
 * new/old MachineSet selection, template equality and hashing.
 */
import { LABEL_CLUSTER_NAME, LABEL_DEPLOYMENT_NAME } from '../../product/api/capi.js';
import type { MachineDeployment, MachineSet, MachineTemplateSpec } from '../../product/api/capi.js';
import { ANN_DESIRED_REPLICAS, ANN_MAX_REPLICAS, ANN_REVISION, ANN_REVISION_HISTORY, canonicalJson, sameJson, fnv32a, generatedName, groupOf } from './util.js';

/** Defaults applied as upstream's MachineDeployment defaulting webhook does (api/v1beta1/machinedeployment_webhook.go). */
export function applyMachineDeploymentDefaults(md: MachineDeployment): boolean {
  const before = canonicalJson({ m: md.metadata.labels, s: md.spec });
  const s = md.spec;
  md.metadata.labels = { ...(md.metadata.labels ?? {}), [LABEL_CLUSTER_NAME]: s.clusterName };
  if (s.replicas === undefined) s.replicas = 1;
  if (s.minReadySeconds === undefined) s.minReadySeconds = 0;
  if (s.revisionHistoryLimit === undefined) s.revisionHistoryLimit = 1;
  if (s.progressDeadlineSeconds === undefined) s.progressDeadlineSeconds = 600;
  s.strategy = s.strategy ?? {};
  if (!s.strategy.type) s.strategy.type = 'RollingUpdate';
  if (s.strategy.type === 'RollingUpdate') {
    s.strategy.rollingUpdate = s.strategy.rollingUpdate ?? {};
    if (s.strategy.rollingUpdate.maxSurge === undefined) s.strategy.rollingUpdate.maxSurge = 1;
    if (s.strategy.rollingUpdate.maxUnavailable === undefined) s.strategy.rollingUpdate.maxUnavailable = 0;
    // No deletePolicy default: v1.10.10's webhook leaves it unset (the MachineSet treats "" as Random); test/upstream/managers.test.ts compares.
  }
  s.selector = s.selector ?? {};
  s.selector.matchLabels = { ...(s.selector.matchLabels ?? {}), [LABEL_DEPLOYMENT_NAME]: md.metadata.name, [LABEL_CLUSTER_NAME]: s.clusterName };
  s.template.metadata = s.template.metadata ?? {};
  s.template.metadata.labels = { ...(s.template.metadata.labels ?? {}), [LABEL_DEPLOYMENT_NAME]: md.metadata.name, [LABEL_CLUSTER_NAME]: s.clusterName };
  if (!s.template.spec.clusterName) s.template.spec.clusterName = s.clusterName;
  // Tolerate versions without the "v" prefix, as upstream does.
  if (s.template.spec.version && !s.template.spec.version.startsWith('v')) s.template.spec.version = `v${s.template.spec.version}`;
  return before !== canonicalJson({ m: md.metadata.labels, s: md.spec });
}

import { maxSurge } from '../../product/api/rolling-update.js';
export { resolveFenceposts, maxSurge, maxUnavailable, type Fenceposts } from '../../product/api/rolling-update.js';

export function totalSpecReplicas(mss: MachineSet[]): number {
  return mss.reduce((n, ms) => n + (ms.spec.replicas ?? 0), 0);
}
export function totalStatusReplicas(mss: MachineSet[]): number {
  return mss.reduce((n, ms) => n + (ms.status?.replicas ?? 0), 0);
}
export function totalReady(mss: MachineSet[]): number {
  return mss.reduce((n, ms) => n + (ms.status?.readyReplicas ?? 0), 0);
}
export function totalAvailable(mss: MachineSet[]): number {
  return mss.reduce((n, ms) => n + (ms.status?.availableReplicas ?? 0), 0);
}

/**
 * mdutil.MachineTemplateUpToDate: equal on the rollout fields only (labels,
 * annotations and node timeouts are propagated in place; the version part of
 * referenced apiVersions is ignored, upstream issues #2140/#2183).
 */
export function equalMachineTemplate(a: MachineTemplateSpec, b: MachineTemplateSpec): boolean {
  return sameJson(normalizeTemplate(a), normalizeTemplate(b));
}

/**
 * mdutil.MachineTemplateDeepCopyRolloutFields: the template without the fields
 * that are propagated in place (labels, annotations, node drain / deletion /
 * volume detach timeouts, clusterName), with the version dropped from the
 * referenced apiVersions and without their namespace. Only what is left can
 * trigger a rollout.
 */
export function rolloutFields(t: MachineTemplateSpec): MachineTemplateSpec {
  const c = structuredClone(t);
  delete c.metadata;
  const spec = { ...c.spec } as Partial<MachineTemplateSpec['spec']>;
  delete spec.clusterName;
  delete spec.nodeDrainTimeout;
  delete spec.nodeDeletionTimeout;
  delete spec.nodeVolumeDetachTimeout;
  if (spec.infrastructureRef) {
    const { namespace: _ns, ...ref } = spec.infrastructureRef;
    spec.infrastructureRef = { ...ref, apiVersion: groupOf(ref.apiVersion) };
  }
  if (spec.bootstrap?.configRef) {
    const { namespace: _ns, ...ref } = spec.bootstrap.configRef;
    spec.bootstrap = { ...spec.bootstrap, configRef: { ...ref, apiVersion: groupOf(ref.apiVersion) } };
  }
  return { spec: spec as MachineTemplateSpec['spec'] };
}

function normalizeTemplate(t: MachineTemplateSpec): MachineTemplateSpec {
  return rolloutFields(t);
}

/**
 * The first part of the machine-template-hash label value. Upstream hashes
 * the rollout fields (hash.Compute over MachineTemplateDeepCopyRolloutFields,
 * FNV-32a); we hash their canonical JSON with FNV-32a. Since v1.4 the label
 * value is `<hash>-<random suffix>` and the MachineSet name `<md>-<suffix>`.
 */
export function computeTemplateHash(t: MachineTemplateSpec): string {
  return String(fnv32a(canonicalJson(rolloutFields(t))));
}

/** computeNewMachineSetName: `<md name>-<5 random characters>`. */
export function machineSetNameFor(md: MachineDeployment, suffix: string): string {
  return generatedName(md.metadata.name, suffix);
}

function creationOrder(a: MachineSet, b: MachineSet): number {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
}

/** MachineSetsByCreationTimestamp (oldest first, name as tie-break). */
export function sortByCreation(mss: MachineSet[]): MachineSet[] {
  return [...mss].sort(creationOrder);
}

/** MachineSetsByDecreasingReplicas: most spec.replicas first, then oldest, then name. */
export function sortByDecreasingReplicas(mss: MachineSet[]): MachineSet[] {
  return [...mss].sort((a, b) => {
    const ra = a.spec.replicas ?? 0;
    const rb = b.spec.replicas ?? 0;
    return ra !== rb ? rb - ra : creationOrder(a, b);
  });
}

/**
 * mdutil.FindNewMachineSet (v1.10.10): among the MachineSets sorted by
 * decreasing spec.replicas (then oldest first, then name), the first whose
 * template is up to date with the deployment's. A rollback therefore re-uses
 * the matching old MachineSet while it still exists. With spec.rolloutAfter
 * reached (`nowMs` ≥ it), only a matching MachineSet created at or after
 * rolloutAfter is new; when there is none, a new one is created, which rolls
 * every Machine out.
 */
export function findNewMachineSet(md: MachineDeployment, mss: MachineSet[], nowMs?: number): MachineSet | undefined {
  const matching = sortByDecreasingReplicas(mss).filter((ms) => equalMachineTemplate(ms.spec.template, md.spec.template));
  const after = rolloutAfterMs(md);
  if (after === undefined || nowMs === undefined || nowMs < after) return matching[0];
  return matching.find((ms) => ms.metadata.creationTimestamp !== undefined && Date.parse(ms.metadata.creationTimestamp) >= after);
}

/** spec.rolloutAfter in ms, when set and valid. */
export function rolloutAfterMs(md: MachineDeployment): number | undefined {
  const v = md.spec.rolloutAfter;
  if (v === undefined) return undefined;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : undefined;
}

export function revisionOf(o: { metadata: { annotations?: Record<string, string> } }): number {
  const v = Number(o.metadata.annotations?.[ANN_REVISION] ?? '0');
  return Number.isFinite(v) ? v : 0;
}

export function maxRevision(mss: MachineSet[]): number {
  return mss.reduce((m, ms) => Math.max(m, revisionOf(ms)), 0);
}

/** Annotations never copied from the deployment onto its MachineSets (mdutil annotationsToSkip). */
export const SKIP_ANNOTATIONS = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  ANN_REVISION,
  ANN_REVISION_HISTORY,
  ANN_DESIRED_REPLICAS,
  ANN_MAX_REPLICAS,
]);

/**
 * mdutil.SetNewMachineSetAnnotations + SetReplicasAnnotations: copy the
 * deployment's annotations, raise the revision (keeping a revision-history
 * when an old MachineSet becomes new again, e.g. rollback RB-1) and record
 * desired / max replicas. Returns whether anything changed.
 */
export function setNewMachineSetAnnotations(md: MachineDeployment, ms: MachineSet, newRevision: number, exists: boolean): boolean {
  const before = canonicalJson(ms.metadata.annotations ?? {});
  const ann = { ...(ms.metadata.annotations ?? {}) };
  for (const [k, v] of Object.entries(md.metadata.annotations ?? {})) if (!SKIP_ANNOTATIONS.has(k)) ann[k] = v;
  const old = ann[ANN_REVISION];
  const oldNum = Number(old ?? '0');
  if (old === undefined || oldNum < newRevision) {
    ann[ANN_REVISION] = String(newRevision);
    if (exists && old !== undefined && old !== '') {
      const hist = ann[ANN_REVISION_HISTORY];
      ann[ANN_REVISION_HISTORY] = hist ? `${hist},${old}` : old;
    }
  }
  const replicas = md.spec.replicas ?? 1;
  ann[ANN_DESIRED_REPLICAS] = String(replicas);
  ann[ANN_MAX_REPLICAS] = String(replicas + maxSurge(md));
  ms.metadata.annotations = ann;
  return before !== canonicalJson(ann);
}

export function replicasAnnotationsNeedUpdate(ms: MachineSet, desired: number, max: number): boolean {
  const a = ms.metadata.annotations ?? {};
  return a[ANN_DESIRED_REPLICAS] !== String(desired) || a[ANN_MAX_REPLICAS] !== String(max);
}
