/** Minimal Kubernetes object model shared by every backend and controller. */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  generateName?: string;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  /** Resource-specific. Typed per kind in src/product/api. */
  spec?: unknown;
  status?: unknown;
}

/** A typed object: `Typed<MachineSpec, MachineStatus>`. */
export interface Typed<S, St = unknown> extends KubeObject {
  spec: S;
  status?: St;
}

export interface ObjectRef {
  kind: string;
  namespace?: string;
  name: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: WatchEventType;
  object: T;
}

export function refOf(o: KubeObject): ObjectRef {
  return { kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name };
}

export function keyOf(ref: { namespace?: string; name: string }): string {
  return ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
}

/** The inverse of keyOf: `namespace/name` (no slash: namespace "default"). */
export function splitKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: 'default', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

export function describeRef(ref: ObjectRef): string {
  return `${ref.kind} ${keyOf(ref)}`;
}

export function ownerRef(owner: KubeObject, controller = true): OwnerReference {
  if (!owner.metadata.uid) throw new Error(`ownerRef: ${describeRef(refOf(owner))} has no uid (not stored yet)`);
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    ...(controller ? { controller: true, blockOwnerDeletion: true } : {}),
  };
}

export function controllerOf(o: KubeObject): OwnerReference | undefined {
  return o.metadata.ownerReferences?.find((r) => r.controller);
}

export function isDeleting(o: KubeObject): boolean {
  return !!o.metadata.deletionTimestamp;
}

export function hasFinalizer(o: KubeObject, f: string): boolean {
  return o.metadata.finalizers?.includes(f) ?? false;
}

export function labelsMatch(labels: Record<string, string> | undefined, selector: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(selector)) if (labels?.[k] !== v) return false;
  return true;
}

/**
 * List order of "namespace/name" keys: byte order, as etcd returns keys (the
 * apiserver lists a kind in that order). Kubernetes names are lowercase
 * alphanumerics, '-' and '.', for which this equals the locale order used
 * before, at a fraction of the cost.
 */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** compareKeys on objects. */
export function compareObjectKeys(a: KubeObject, b: KubeObject): number {
  return compareKeys(`${a.metadata.namespace ?? ''}/${a.metadata.name}`, `${b.metadata.namespace ?? ''}/${b.metadata.name}`);
}

/**
 * Add (`present`) or remove `key` in `keys`, kept sorted with compareKeys: a
 * binary search and at most one splice (an index kept in list order as
 * objects come and go, instead of sorting again).
 */
export function setSortedKey(keys: string[], key: string, present: boolean): void {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(keys[mid]!, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  const there = keys[lo] === key;
  if (present && !there) keys.splice(lo, 0, key);
  else if (!present && there) keys.splice(lo, 1);
}
