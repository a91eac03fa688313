/**
 * Helpers shared by the simulated Cluster API controllers: conditions,
 * int-or-percent scaling, template hashing, owner references and the
 * well-known names that upstream uses but src/product/api does not (yet) export.
 */
import { rfc3339 } from '../../core/clock.js';
import type { Condition, ObjectReference } from '../../product/api/capi.js';
import type { ControllerContext, Logger } from '../../core/runtime/context.js';
import type { KubeObject, OwnerReference } from '../../core/kube/types.js';

/** controller-manager deployments whose logs we write (OPS-3 style). */
export const CAPI_DEPLOYMENT = 'capi-controller-manager';
export const CAPBK_DEPLOYMENT = 'capi-kubeadm-bootstrap-controller-manager';

/** Upstream annotation keys (api/v1beta1/machinedeployment_types.go), defined once in src/product/api/capi.ts. */
export {
  ANNOTATION_REVISION as ANN_REVISION,
  ANNOTATION_DESIRED_REPLICAS as ANN_DESIRED_REPLICAS,
  ANNOTATION_MAX_REPLICAS as ANN_MAX_REPLICAS,
} from '../../product/api/capi.js';
export const ANN_REVISION_HISTORY = 'machinedeployment.clusters.x-k8s.io/revision-history';
/** Upstream ExcludeNodeDrainingAnnotation (api/v1beta1/common_types.go). */
export const ANN_EXCLUDE_NODE_DRAINING = 'machine.cluster.x-k8s.io/exclude-node-draining';
/** Upstream ExcludeWaitForNodeVolumeDetachAnnotation. */
export const ANN_EXCLUDE_WAIT_FOR_VOLUME_DETACH = 'machine.cluster.x-k8s.io/exclude-wait-for-node-volume-detach';
export { ANN_DRAIN_BLOCKED } from '../workload/drain.js';
export { SECRET_TYPE_CLUSTER } from '../../product/api/capi.js';

/** Kubernetes' rand.SafeEncodeString (k8s.io/apimachinery/pkg/util/rand). */
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';
export function safeEncodeString(s: string): string {
  let out = '';
  for (const ch of s) out += ALPHANUMS[ch.codePointAt(0)! % ALPHANUMS.length];
  return out;
}

/** JSON with sorted object keys (the stable input of the template hash). */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
}

/**
 * `canonicalJson(a) === canonicalJson(b)` without building the strings:
 * objects compare by their defined keys in any order, arrays element-wise,
 * and everything else (primitives, undefined, functions) by its canonical
 * JSON text, exactly as the string comparison would.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const ao = typeof a === 'object' && a !== null;
  const bo = typeof b === 'object' && b !== null;
  if (!ao || !bo) return !ao && !bo && canonicalJson(a) === canonicalJson(b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], bb[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k of Object.keys(x)) {
    if (x[k] === undefined) continue;
    n++;
    if (y[k] === undefined || !Object.prototype.hasOwnProperty.call(y, k) || !sameJson(x[k], y[k])) return false;
  }
  for (const k of Object.keys(y)) if (y[k] !== undefined) n--;
  return n === 0;
}

/** FNV-1a 32-bit over UTF-8 bytes. */
export function fnv32a(s: string): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(s, 'utf8')) {
    h ^= b;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * format.MustFormatValue (cluster-api util/labels/format): the value itself
 * when it is a valid label value, else `hash_<base64url(fnv32a)>_z`. Upstream
 * labels Machines with their MachineSet's and KubeadmControlPlane's names this
 * way, since those names may be longer than a label value may be (63).
 */
export function mustFormatLabelValue(s: string): string {
  if (s.length <= 63 && /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(s)) return s;
  const h = fnv32a(s);
  const bytes = Buffer.from([h >>> 24, (h >>> 16) & 0xff, (h >>> 8) & 0xff, h & 0xff]);
  return `hash_${bytes.toString('base64url')}_z`;
}

/**
 * The name `<base>-<suffix>` of a generated object, kept within 63
 * characters as upstream's generators keep it (internal/topology/names:
 * computeNewMachineSetName and the default Machine name templates trim to
 * 58 characters before the 5-character random part).
 */
export function generatedName(base: string, suffix: string): string {
  const name = `${base}-${suffix}`;
  return name.length > 63 ? `${name.slice(0, 63 - suffix.length)}${suffix}` : name;
}

export type { IntOrString } from '../../product/api/capi.js';
export { scaledValue } from '../../product/api/rolling-update.js';


export function getCondition(conds: Condition[] | undefined, type: string): Condition | undefined {
  return conds?.find((c) => c.type === type);
}

/**
 * Set a condition (util/conditions.Set): lastTransitionTime only moves when the
 * status changes. Returns the new list (sorted with Ready first, like upstream).
 */
export function setCondition(conds: Condition[] | undefined, c: Omit<Condition, 'lastTransitionTime'>, nowMs: number): Condition[] {
  const list = [...(conds ?? [])];
  const i = list.findIndex((x) => x.type === c.type);
  const prev = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    type: c.type,
    status: c.status,
    ...(c.severity ? { severity: c.severity } : {}),
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
    lastTransitionTime: prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : rfc3339(nowMs),
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list.sort((a, b) => (a.type === 'Ready' ? -1 : b.type === 'Ready' ? 1 : a.type.localeCompare(b.type)));
}

export function markTrue(conds: Condition[] | undefined, type: string, nowMs: number): Condition[] {
  return setCondition(conds, { type, status: 'True' }, nowMs);
}

export function markFalse(
  conds: Condition[] | undefined,
  type: string,
  reason: string,
  severity: 'Error' | 'Warning' | 'Info',
  message: string,
  nowMs: number,
): Condition[] {
  return setCondition(conds, { type, status: 'False', reason, severity, message }, nowMs);
}

/** util.EnsureOwnerRef: add or update (matched by kind + name). */
export function ensureOwnerRef(refs: OwnerReference[] | undefined, ref: OwnerReference): OwnerReference[] {
  const out = [...(refs ?? [])];
  const i = out.findIndex((r) => r.kind === ref.kind && r.name === ref.name && groupOf(r.apiVersion) === groupOf(ref.apiVersion));
  if (i >= 0) out[i] = ref;
  else out.push(ref);
  return out;
}

export function groupOf(apiVersion: string | undefined): string {
  if (!apiVersion) return '';
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

export { splitKey } from '../../core/kube/types.js';

export function keyFor(o: KubeObject): string {
  return `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`;
}

export function refTo(o: KubeObject): ObjectReference {
  return { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace };
}

/** The owner reference of a given kind (controller or not). */
export function ownerOfKind(o: KubeObject, kind: string): OwnerReference | undefined {
  return o.metadata.ownerReferences?.find((r) => r.kind === kind);
}

export function msSince(ts: string | undefined, nowMs: number): number {
  if (!ts) return 0;
  return nowMs - Date.parse(ts);
}

export function logger(ctx: ControllerContext, deployment: string, controller: string): Logger {
  return ctx.logs.logger(deployment, controller);
}

export function stringMapEqual(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ak = Object.keys(a ?? {});
  const bk = Object.keys(b ?? {});
  return ak.length === bk.length && ak.every((k) => (a ?? {})[k] === (b ?? {})[k]);
}
