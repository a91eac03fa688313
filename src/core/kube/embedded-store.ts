import type { Clock } from '../clock.js';
import { rfc3339 } from '../clock.js';
import type { EventLog } from '../events.js';
import type { Rng } from '../rng.js';
import type { KubeClient, ListOptions, PatchType, WatchOptions, WriteOptions } from './client.js';
import { objectMetaCauses } from './object-meta.js';
import { prune, validate as validateSchema, type JSONSchemaProps } from './schema.js';
import { KubeApiError, type FieldCause } from './errors.js';
import { replicasCauses, type ScalePaths } from './scale-paths.js';
import { applyJsonPatch, applyMergePatch, jsonClone, jsonEqual } from './patch.js';
import { resourceForKind } from './resources.js';
import { LabelIndex } from './label-index.js';
import { listFilter, objectFilter, selectedEventType } from './selectors.js';
export { objectFilter } from './selectors.js';
import { compareKeys, describeRef, keyOf, setSortedKey, type KubeObject, type ObjectRef, type WatchEvent } from './types.js';

/** Validating admission: returns the causes of a rejection (empty = admitted). */
export type Validator = (op: 'CREATE' | 'UPDATE', obj: KubeObject, old: KubeObject | undefined) => FieldCause[];
/** Mutating admission / defaulting: may change `obj` in place. */
export type Defaulter = (obj: KubeObject) => void;

export interface EmbeddedStoreOptions {
  clock: Clock;
  rng: Rng;
  /** Shown in events: "management" or the workload cluster's name. */
  clusterName: string;
  events?: EventLog;
  /** Watch events kept for resuming watches from a resourceVersion (default 5000); older versions get 410 Gone. */
  watchHistory?: number;
}

type Handler = (e: WatchEvent) => void;

interface Watcher {
  handler: Handler;
  /** The handler only reads: give it the stored (frozen) object, no copy. */
  shared?: boolean;
  /** undefined: every object of the kind. */
  match?: (o: KubeObject) => boolean;
}

interface HistoryEntry {
  rv: number;
  type: WatchEvent['type'];
  /** Never mutated after it was recorded (the store replaces objects on write). */
  object: KubeObject;
  old?: KubeObject;
}


/**
 * Freeze a JSON value and everything under it. A frozen object met on the way
 * is already deeply frozen (the store freezes bottom-up and only ever freezes
 * its own copies), so shared subtrees are not walked again.
 */
export function deepFreeze<T>(v: T): T {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return v;
  const o = v as Record<string, unknown>;
  // Own keys only (a non-plain value may inherit enumerable ones); primitives need no call.
  for (const k of Object.keys(o)) {
    const x = o[k];
    if (typeof x === 'object' && x !== null) deepFreeze(x);
  }
  return Object.freeze(v);
}

/**
 * Structural sharing: wherever the fresh value `nv` (owned by the caller, may
 * be modified) deep-equals the stored, frozen value `ov` at the same path, use
 * `ov`. Returns `ov` when everything is equal, else `nv` with equal subtrees
 * replaced. Unchanged parts of a written object are then the very objects
 * already stored (validated, frozen): cheap to compare, to freeze and to keep
 * in the watch history.
 */
function share(nv: unknown, ov: unknown): unknown {
  if (nv === ov || typeof nv !== 'object' || nv === null || typeof ov !== 'object' || ov === null) return nv;
  if (Array.isArray(nv)) {
    if (!Array.isArray(ov)) return nv;
    let same = nv.length === ov.length;
    for (let i = 0; i < nv.length; i++) {
      const sv = share(nv[i], ov[i]);
      nv[i] = sv;
      if (sv !== ov[i]) same = false;
    }
    return same ? ov : nv;
  }
  if (Array.isArray(ov)) return nv;
  const n = nv as Record<string, unknown>;
  const o = ov as Record<string, unknown>;
  let same = true;
  let defined = 0;
  for (const k of Object.keys(n)) {
    const v = n[k];
    if (v === undefined) {
      if (o[k] !== undefined) same = false;
      continue;
    }
    defined++;
    const sv = share(v, o[k]);
    n[k] = sv;
    if (sv !== o[k]) same = false;
  }
  if (same) for (const k of Object.keys(o)) if (o[k] !== undefined && --defined < 0) return nv;
  return same && defined === 0 ? ov : nv;
}

/**
 * A private copy of the caller's value `nv` (structuredClone semantics for
 * JSON data) that reuses the stored, frozen value `ov` wherever the two are
 * deep-equal: one walk instead of a full copy plus share(). Returns `ov` when
 * nothing differs. Subtrees the caller took from the stored object unchanged
 * (nv === ov) cost nothing.
 */
function copyShared(nv: unknown, ov: unknown): unknown {
  if (nv === ov || typeof nv !== 'object' || nv === null) return nv;
  if (Array.isArray(nv)) {
    const oa = Array.isArray(ov) ? (ov as unknown[]) : undefined;
    let same = oa !== undefined && oa.length === nv.length;
    const out = new Array<unknown>(nv.length);
    for (let i = 0; i < nv.length; i++) {
      const c = copyShared(nv[i], oa?.[i]);
      out[i] = c;
      if (same && c !== oa![i]) same = false;
    }
    return same ? ov : out;
  }
  if (Object.getPrototypeOf(nv) !== Object.prototype) return structuredClone(nv);
  const n = nv as Record<string, unknown>;
  const o = typeof ov === 'object' && ov !== null && !Array.isArray(ov) ? (ov as Record<string, unknown>) : undefined;
  let same = o !== undefined;
  let defined = 0;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(n)) {
    const c = copyShared(n[k], o?.[k]);
    out[k] = c;
    if (c === undefined) {
      if (o?.[k] !== undefined) same = false;
      continue;
    }
    defined++;
    if (same && c !== o![k]) same = false;
  }
  if (same) for (const k of Object.keys(o!)) if (o![k] !== undefined) defined--;
  return same && defined === 0 ? ov : out;
}


/**
 * An in-process Kubernetes API with the semantics controllers depend on:
 * resourceVersion + optimistic concurrency (409), generation bumped on spec
 * changes only, status subresource, finalizers + deletionTimestamp, ownerReference
 * garbage collection (background), label selectors, watch. Handlers run
 * synchronously after each write, which keeps simulations deterministic.
 */
export class EmbeddedStore implements KubeClient {
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  /** Per kind, the keys in list order (cached; dropped when a key is added or removed). */
  private readonly sortedKeys = new Map<string, string[]>();
  /** Per kind, the objects carrying each label (narrows lists with a label selector). */
  private readonly labelIndex = new LabelIndex();
  private readonly handlers = new Map<string, Set<Watcher>>();
  private readonly schemas = new Map<string, JSONSchemaProps>();
  /** The replicas paths of a CRD's scale subresource, by kind (validated as int32 on every write). */
  private readonly scalePaths = new Map<string, ScalePaths>();
  private readonly history: HistoryEntry[] = [];
  /** Versions at or above this can be resumed from; older ones get 410 Gone. */
  private historyFloor = 0;
  /** owner uid -> dependents (kind + key). */
  private readonly dependents = new Map<string, Set<string>>();
  private readonly validators = new Map<string, Validator[]>();
  private readonly defaulters = new Map<string, Defaulter[]>();
  private rv = 0;
  private readonly uids: Rng;

  constructor(private readonly opts: EmbeddedStoreOptions) {
    this.uids = opts.rng.fork(`uids/${opts.clusterName}`);
  }

  get clusterName(): string {
    return this.opts.clusterName;
  }

  addValidator(kind: string, v: Validator): void {
    this.validators.set(kind, [...(this.validators.get(kind) ?? []), v]);
  }

  addDefaulter(kind: string, d: Defaulter): void {
    this.defaulters.set(kind, [...(this.defaulters.get(kind) ?? []), d]);
  }

  /**
   * Validate and prune a kind against its structural OpenAPI v3 schema on
   * every write, as the apiserver does for CRDs (see src/core/kube/crds).
   */
  setSchema(kind: string, schema: JSONSchemaProps, scale?: ScalePaths): void {
    this.schemas.set(kind, schema);
    if (scale) this.scalePaths.set(kind, scale);
    else this.scalePaths.delete(kind);
  }

  schemaFor(kind: string): JSONSchemaProps | undefined {
    return this.schemas.get(kind);
  }

  /** Current resourceVersion of the whole store. */
  resourceVersion(): string {
    return String(this.rv);
  }

  // ---- reads ---------------------------------------------------------------

  async get<T extends KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    return this.getSync<T>(ref);
  }

  getSync<T extends KubeObject>(ref: ObjectRef): T | undefined {
    const o = this.bucket(ref.kind).get(this.key(ref));
    return o ? (jsonClone(o) as T) : undefined;
  }

  /** The stored object itself: deep-frozen, shared, never copied (KubeClient.getShared). */
  async getShared<T extends KubeObject>(ref: ObjectRef): Promise<Readonly<T> | undefined> {
    return this.getSharedSync<T>(ref);
  }

  getSharedSync<T extends KubeObject>(ref: ObjectRef): Readonly<T> | undefined {
    return this.bucket(ref.kind).get(this.key(ref)) as T | undefined;
  }

  /** Stored objects, deep-frozen and shared, in list order (KubeClient.listShared). */
  async listShared<T extends KubeObject>(kind: string, opts: ListOptions = {}): Promise<readonly Readonly<T>[]> {
    return this.listSharedSync<T>(kind, opts);
  }

  listSharedSync<T extends KubeObject>(kind: string, opts: ListOptions = {}): Readonly<T>[] {
    const out: T[] = [];
    const { match, labels } = listFilter(kind, opts);
    const bucket = this.bucket(kind);
    // A label selector that narrows to a few objects: those, sorted into list order (not a walk over the whole kind).
    const few = labels ? this.labelIndex.candidates(kind, labels) : undefined;
    const keys = few !== undefined && few.size * 4 < bucket.size ? [...few].sort(compareKeys) : this.keysInOrder(kind);
    for (const k of keys) {
      const o = bucket.get(k)!;
      if (match && !match(o)) continue;
      out.push(o as T);
    }
    return out;
  }

  /**
   * The objects of `kind` in `namespace` that name `ownerUid` among their
   * ownerReferences, shared, in list order: from the store's owner index (the
   * one garbage collection keeps), not a walk over the namespace
   * (KubeClient.listOwnedSharedSync).
   */
  listOwnedSharedSync<T extends KubeObject>(kind: string, namespace: string, ownerUid: string): Readonly<T>[] {
    const deps = this.dependents.get(ownerUid);
    if (!deps) return [];
    const prefix = `${kind}\u0000`;
    const keys: string[] = [];
    for (const id of deps) if (id.startsWith(prefix)) keys.push(id.slice(prefix.length));
    keys.sort(compareKeys);
    const bucket = this.bucket(kind);
    const out: T[] = [];
    for (const k of keys) {
      const o = bucket.get(k);
      if (o && (o.metadata.namespace ?? '') === namespace && o.metadata.ownerReferences?.some((r) => r.uid === ownerUid)) out.push(o as T);
    }
    return out;
  }

  private keysInOrder(kind: string): string[] {
    let keys = this.sortedKeys.get(kind);
    if (!keys) {
      keys = [...this.bucket(kind).keys()].sort(compareKeys);
      this.sortedKeys.set(kind, keys);
    }
    return keys;
  }

  /**
   * Keep a kind's key order (if built) in step with a create or delete: a
   * binary search and one splice, instead of sorting all keys again on the
   * next list (a rollout creates and deletes objects between most lists).
   */
  private orderKey(kind: string, key: string, present: boolean): void {
    const keys = this.sortedKeys.get(kind);
    if (keys) setSortedKey(keys, key, present);
  }


  async list<T extends KubeObject>(kind: string, opts: ListOptions = {}): Promise<T[]> {
    return this.listSync<T>(kind, opts);
  }

  listSync<T extends KubeObject>(kind: string, opts: ListOptions = {}): T[] {
    return this.listSharedSync<T>(kind, opts).map((o) => jsonClone(o) as T);
  }

  /** A list plus the store's resourceVersion at that instant, to start a watch from (list-then-watch). */
  listWithVersion<T extends KubeObject>(kind: string, opts: ListOptions = {}): { items: T[]; resourceVersion: string } {
    return { items: this.listSync<T>(kind, opts), resourceVersion: this.resourceVersion() };
  }

  /** Number of stored objects of a kind (cheap; no copies). */
  count(kind: string): number {
    return this.bucket(kind).size;
  }

  // ---- writes --------------------------------------------------------------

  async create<T extends KubeObject>(obj: T, wopts: WriteOptions = {}): Promise<T> {
    const info = resourceForKind(obj.kind);
    const o = jsonClone(obj) as KubeObject;
    if (!o.metadata?.name) {
      if (o.metadata?.generateName) o.metadata.name = o.metadata.generateName + this.uids.string(5);
      else throw KubeApiError.invalid(obj.kind, '', [{ field: 'metadata.name', message: 'Required value: name or generateName is required' }]);
    }
    if (info.namespaced && !o.metadata.namespace) o.metadata.namespace = 'default';
    if (!info.namespaced) delete o.metadata.namespace;
    const metaCauses = objectMetaCauses(o.kind, o.metadata);
    if (metaCauses.length) throw KubeApiError.invalid(o.kind, o.metadata.name, metaCauses);
    const ref = { kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name };
    const bucket = this.bucket(o.kind);
    const key = this.key(ref);
    if (bucket.has(key)) throw new KubeApiError('AlreadyExists', `${info.plural} "${o.metadata.name}" already exists`);
    this.checkSchema(o, 'all', wopts);
    for (const d of this.defaulters.get(o.kind) ?? []) d(o);
    this.checkScale(o, 'all');
    this.validate('CREATE', o, undefined);
    o.apiVersion = o.apiVersion || `${info.group ? info.group + '/' : ''}${info.version}`;
    o.metadata.creationTimestamp = rfc3339(this.opts.clock.now());
    o.metadata.generation = 1;
    delete o.metadata.deletionTimestamp;
    delete o.metadata.resourceVersion;
    if (wopts.dryRun) return jsonClone(o) as T;
    o.metadata.uid = this.uids.uuid();
    o.metadata.resourceVersion = this.nextRv();
    deepFreeze(o);
    bucket.set(key, o);
    this.orderKey(o.kind, key, true);
    this.labelIndex.update(o.kind, key, undefined, o.metadata.labels);
    this.indexOwners(o);
    this.opts.events?.record({
      source: 'kube',
      type: 'object.created',
      message: `[${this.opts.clusterName}] created ${describeRef(ref)}`,
      data: { cluster: this.opts.clusterName, kind: o.kind, namespace: ref.namespace, name: ref.name },
    });
    this.emit('ADDED', o);
    return jsonClone(o) as T;
  }

  /**
   * Put objects in as another cluster stored them (a replay from a captured bundle, issue 35): uid,
   * creationTimestamp, generation, labels, finalizers, owner references, deletionTimestamp and status are kept
   * (schemas and admission ran where they were written); each gets a resourceVersion of this store and watchers
   * see it ADDED. All or nothing: an unknown kind, a missing name or an object that is already here refuses the
   * whole list, naming it, before anything is stored.
   */
  restore(objects: readonly KubeObject[]): void {
    const planned = new Set<string>();
    const ready: KubeObject[] = [];
    for (const [i, obj] of objects.entries()) {
      const where = `objects[${i}] (${obj?.kind ?? '?'} ${obj?.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj?.metadata?.name ?? '?'})`;
      if (!obj?.kind || !obj.metadata?.name) throw new KubeApiError('BadRequest', `${where}: kind and metadata.name are required`);
      let info: ReturnType<typeof resourceForKind>;
      try {
        info = resourceForKind(obj.kind);
      } catch {
        throw new KubeApiError('BadRequest', `${where}: kind ${obj.kind} is not served by this cluster`);
      }
      const o = jsonClone(obj) as KubeObject;
      if (info.namespaced) o.metadata.namespace ??= 'default';
      else delete o.metadata.namespace;
      o.apiVersion ||= `${info.group ? info.group + '/' : ''}${info.version}`;
      const key = `${o.kind}\u0000${this.key({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name })}`;
      if (planned.has(key) || this.bucket(o.kind).has(this.key({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name }))) {
        throw new KubeApiError('AlreadyExists', `${where}: already exists`);
      }
      planned.add(key);
      o.metadata.uid ||= this.uids.uuid();
      o.metadata.creationTimestamp ||= rfc3339(this.opts.clock.now());
      o.metadata.generation ??= 1;
      ready.push(o);
    }
    for (const o of ready) {
      o.metadata.resourceVersion = this.nextRv();
      deepFreeze(o);
      const key = this.key({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name });
      this.bucket(o.kind).set(key, o);
      this.orderKey(o.kind, key, true);
      this.labelIndex.update(o.kind, key, undefined, o.metadata.labels);
      this.indexOwners(o);
    }
    for (const o of ready) this.emit('ADDED', o);
  }

  async update<T extends KubeObject>(obj: T, wopts: WriteOptions = {}): Promise<T> {
    return this.write(obj, 'main', wopts);
  }

  async updateStatus<T extends KubeObject>(obj: T, wopts: WriteOptions = {}): Promise<T> {
    return this.write(obj, 'status', wopts);
  }

  /** updateStatus returning the stored object itself (deep-frozen, shared; KubeClient.updateStatusShared). */
  async updateStatusShared<T extends KubeObject>(obj: T, wopts: WriteOptions = {}): Promise<Readonly<T>> {
    return this.writeStored(obj, 'status', wopts) as T;
  }

  async patch<T extends KubeObject>(
    ref: ObjectRef,
    type: PatchType,
    patch: unknown,
    opts: { subresource?: 'status' } & WriteOptions = {},
  ): Promise<T> {
    const cur = this.bucket(ref.kind).get(this.key(ref));
    if (!cur) throw KubeApiError.notFound(resourceForKind(ref.kind).plural, ref.name);
    const patched = (type === 'merge' ? applyMergePatch(cur, patch) : applyJsonPatch(cur, patch)) as KubeObject;
    if (typeof patched !== 'object' || patched === null || !patched.metadata) {
      throw new KubeApiError('BadRequest', 'patch removed the object metadata');
    }
    // A patch is not a conditional write unless it carries a resourceVersion itself.
    const carriesRv = JSON.stringify(patch).includes('"resourceVersion"');
    // (The merge patch shares untouched subtrees with the stored, frozen object: copy metadata before setting it.)
    if (!carriesRv) patched.metadata = { ...patched.metadata, resourceVersion: cur.metadata.resourceVersion };
    return this.write(patched as T, opts.subresource === 'status' ? 'status' : 'main', opts);
  }

  async delete(ref: ObjectRef, opts: { ignoreNotFound?: boolean } = {}): Promise<void> {
    const bucket = this.bucket(ref.kind);
    const key = this.key(ref);
    const cur = bucket.get(key);
    if (!cur) {
      if (opts.ignoreNotFound) return;
      throw KubeApiError.notFound(resourceForKind(ref.kind).plural, ref.name);
    }
    if (cur.metadata.finalizers?.length) {
      if (cur.metadata.deletionTimestamp) return;
      // Objects are never mutated in place once stored: watch history holds references to them.
      const next = deepFreeze({
        ...cur,
        metadata: { ...cur.metadata, deletionTimestamp: rfc3339(this.opts.clock.now()), generation: (cur.metadata.generation ?? 1) + 1, resourceVersion: this.nextRv() },
      });
      bucket.set(key, next);
      this.opts.events?.record({
        source: 'kube',
        type: 'object.deleting',
        message: `[${this.opts.clusterName}] ${describeRef(ref)} marked for deletion (finalizers: ${(cur.metadata.finalizers ?? []).join(', ')})`,
        data: { cluster: this.opts.clusterName, kind: ref.kind, namespace: ref.namespace, name: ref.name },
      });
      this.emit('MODIFIED', next, cur);
      return;
    }
    this.remove(cur);
  }

  /**
   * Subscribe to a kind. With `opts.resourceVersion`, the retained events
   * after that version are replayed synchronously before this returns;
   * a version older than the retained history throws 410 Gone.
   */
  watch<T extends KubeObject>(kind: string, handler: (e: WatchEvent<T>) => void, opts: WatchOptions = {}): () => void {
    resourceForKind(kind);
    const match = objectFilter(kind, opts);
    const w: Watcher = { handler: handler as Handler, ...(match ? { match } : {}), ...(opts.shared ? { shared: true } : {}) };
    if (opts.resourceVersion !== undefined && opts.resourceVersion !== '' && opts.resourceVersion !== '0') {
      const from = Number(opts.resourceVersion);
      if (!Number.isInteger(from) || from < 0) throw new KubeApiError('BadRequest', `invalid resource version "${opts.resourceVersion}"`);
      if (from < this.historyFloor) {
        throw new KubeApiError('Gone', `too old resource version: ${from} (${this.historyFloor})`);
      }
      for (const e of this.history) {
        if (e.rv <= from || e.object.kind !== kind) continue;
        this.deliver(w, e.type, e.object, e.old);
      }
    }
    const set = this.handlers.get(kind) ?? new Set<Watcher>();
    this.handlers.set(kind, set);
    set.add(w);
    opts.onReady?.();
    return () => set.delete(w);
  }

  /** The oldest resourceVersion a watch can still resume from. */
  oldestResumableVersion(): string {
    return String(this.historyFloor);
  }

  // ---- internals -----------------------------------------------------------

  private write<T extends KubeObject>(obj: T, part: 'main' | 'status', wopts: WriteOptions = {}): T {
    return jsonClone(this.writeStored(obj, part, wopts)) as T;
  }

  /** A write; returns the stored version (frozen), or for a dry run the would-be version. */
  private writeStored(obj: KubeObject, part: 'main' | 'status', wopts: WriteOptions = {}): KubeObject {
    const info = resourceForKind(obj.kind);
    const ref = { kind: obj.kind, namespace: info.namespaced ? obj.metadata.namespace ?? 'default' : undefined, name: obj.metadata.name };
    const bucket = this.bucket(obj.kind);
    const key = this.key(ref);
    const cur = bucket.get(key);
    if (!cur) throw KubeApiError.notFound(info.plural, ref.name);
    if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== cur.metadata.resourceVersion) {
      throw new KubeApiError(
        'Conflict',
        `Operation cannot be fulfilled on ${info.plural} "${ref.name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    // A shallow copy: the stored object is frozen and its untouched parts are shared, never modified.
    const next: KubeObject = { ...cur, metadata: { ...cur.metadata } };
    if (part === 'status' || !info.statusSubresource) {
      if (obj.status === undefined) delete next.status;
      // Unchanged parts of the status become the stored (validated) objects again, which checkSchema skips.
      else next.status = part === 'status' ? copyShared(obj.status, cur.status) : jsonClone(obj.status);
    }
    if (part === 'status') this.checkSchema(next, 'status', wopts);
    if (part === 'main') {
      const incoming = jsonClone(obj) as KubeObject;
      // Everything but status (for kinds with a status subresource) and server-owned metadata.
      for (const k of Object.keys(next)) if (k !== 'metadata' && k !== 'status' && k !== 'apiVersion' && k !== 'kind') delete (next as unknown as Record<string, unknown>)[k];
      for (const [k, v] of Object.entries(incoming)) {
        if (k === 'metadata' || k === 'status' || k === 'apiVersion' || k === 'kind') continue;
        (next as unknown as Record<string, unknown>)[k] = v;
      }
      const m = incoming.metadata;
      next.metadata = {
        ...cur.metadata,
        labels: m.labels,
        annotations: m.annotations,
        finalizers: m.finalizers,
        ownerReferences: m.ownerReferences,
      };
      // managedFields are the client's to send (the facade's server-side apply writes them; docs/kube.md).
      const mf = (m as { managedFields?: unknown }).managedFields;
      if (mf !== undefined) (next.metadata as { managedFields?: unknown }).managedFields = mf;
      for (const k of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
        if (next.metadata[k] === undefined) delete next.metadata[k];
      }
      const metaCauses = objectMetaCauses(next.kind, next.metadata, false);
      if (metaCauses.length) throw KubeApiError.invalid(next.kind, ref.name, metaCauses);
      this.checkSchema(next, info.statusSubresource ? 'main' : 'all', wopts);
      if (cur.metadata.deletionTimestamp) {
        const added = (m.finalizers ?? []).filter((f) => !(cur.metadata.finalizers ?? []).includes(f));
        if (added.length) {
          throw new KubeApiError('Forbidden', `${info.plural} "${ref.name}": no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`);
        }
      }
      for (const d of this.defaulters.get(obj.kind) ?? []) d(next);
      this.checkScale(next, info.statusSubresource ? 'main' : 'all');
      this.validate('UPDATE', next, cur);
      // Generation follows spec-ish content (everything but metadata and status), as for CRDs.
      if (!jsonEqual(this.specPart(next), this.specPart(cur))) next.metadata.generation = (cur.metadata.generation ?? 1) + 1;
    }
    if (part === 'main') {
      // After admission (defaulters may have changed the new parts): share what did not change.
      for (const k of Object.keys(next) as (keyof KubeObject)[]) if (k !== 'metadata') (next as unknown as Record<string, unknown>)[k] = share(next[k], cur[k]);
      next.metadata = share(next.metadata, cur.metadata) === cur.metadata ? { ...cur.metadata } : next.metadata;
    }
    if (jsonEqual(next, cur)) return cur; // no-op writes do not bump resourceVersion
    if (wopts.dryRun) return jsonClone(next) as KubeObject;
    next.metadata.resourceVersion = this.nextRv();
    deepFreeze(next);
    this.unindexOwners(cur);
    bucket.set(key, next);
    this.indexOwners(next);
    this.labelIndex.update(next.kind, key, cur.metadata.labels, next.metadata.labels);
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) {
      return this.remove(next);
    }
    this.emit('MODIFIED', next, cur);
    return next;
  }

  /**
   * Structural-schema handling of a write: prune unknown fields (Strict:
   * 400 BadRequest naming them; Warn: warnings), then validate types, required
   * fields, enums and bounds (422 Invalid naming each field). `part` limits
   * both to what the request may change.
   */
  private checkSchema(o: KubeObject, part: 'all' | 'main' | 'status', wopts: WriteOptions): void {
    const schema = this.schemas.get(o.kind);
    if (!schema) return;
    const props = schema.properties ?? {};
    const rec = o as unknown as Record<string, unknown>;
    const unknown: string[] = [];
    const causes: FieldCause[] = [];
    for (const key of Object.keys(rec)) {
      if (key === 'metadata' || key === 'apiVersion' || key === 'kind') continue;
      if (part === 'status' ? key !== 'status' : part === 'main' && key === 'status') continue;
      const p = props[key];
      if (!p) {
        unknown.push(key);
        delete rec[key];
        continue;
      }
      unknown.push(...prune(rec[key], p, key));
      causes.push(...validateSchema(rec[key], p, key));
    }
    if (unknown.length && wopts.fieldValidation === 'Strict') {
      const info = resourceForKind(o.kind);
      throw new KubeApiError(
        'BadRequest',
        `${o.kind} in version "${info.version}" cannot be handled as a ${o.kind}: strict decoding error: ${unknown.map((u) => `unknown field "${u}"`).join(', ')}`,
      );
    }
    if (unknown.length && wopts.fieldValidation === 'Warn') wopts.warnings?.push(...unknown.map((u) => `unknown field "${u}"`));
    // A status write runs no webhook: its scale path is checked here; the others after the mutating webhooks (checkScale).
    if (part === 'status') causes.push(...this.scaleCauses(o, 'status'));
    if (causes.length) throw KubeApiError.invalid(o.kind, o.metadata.name, causes);
  }

  /** The scale subresource's replicas paths (ScalePaths) of what `part` writes. */
  private scaleCauses(o: KubeObject, part: 'all' | 'main' | 'status'): FieldCause[] {
    const scale = this.scalePaths.get(o.kind);
    if (!scale) return [];
    const rec = o as unknown as Record<string, unknown>;
    return [...(part !== 'status' ? replicasCauses(rec, scale.specReplicasPath) : []), ...(part !== 'main' ? replicasCauses(rec, scale.statusReplicasPath) : [])];
  }

  /** As kube-apiserver: a custom resource's validation (the scale paths with it) runs after the mutating webhooks, whose decode may refuse first (400). */
  private checkScale(o: KubeObject, part: 'all' | 'main'): void {
    const causes = this.scaleCauses(o, part);
    if (causes.length) throw KubeApiError.invalid(o.kind, o.metadata.name, causes);
  }

  private specPart(o: KubeObject): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(o)) if (k !== 'metadata' && k !== 'status' && k !== 'apiVersion' && k !== 'kind') out[k] = v;
    return out;
  }

  private validate(op: 'CREATE' | 'UPDATE', obj: KubeObject, old: KubeObject | undefined): void {
    const causes: FieldCause[] = [];
    for (const v of this.validators.get(obj.kind) ?? []) causes.push(...v(op, obj, old));
    if (causes.length) throw KubeApiError.invalid(obj.kind, obj.metadata.name, causes);
  }

  private remove(o: KubeObject): KubeObject {
    const ref = { kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name };
    const key = this.key(ref);
    this.bucket(o.kind).delete(key);
    this.orderKey(o.kind, key, false);
    this.labelIndex.update(o.kind, key, o.metadata.labels, undefined);
    this.unindexOwners(o);
    this.opts.events?.record({
      source: 'kube',
      type: 'object.deleted',
      message: `[${this.opts.clusterName}] deleted ${describeRef(ref)}`,
      data: { cluster: this.opts.clusterName, kind: o.kind, namespace: ref.namespace, name: ref.name },
    });
    const gone = deepFreeze({ ...o, metadata: { ...o.metadata, resourceVersion: this.nextRv() } });
    this.emit('DELETED', gone);
    this.collectGarbage(o.metadata.uid);
    return gone;
  }

  /** Background cascading deletion: dependents whose every owner is gone are deleted. */
  private collectGarbage(ownerUid: string | undefined): void {
    if (!ownerUid) return;
    const deps = this.dependents.get(ownerUid);
    if (!deps) return;
    this.dependents.delete(ownerUid);
    for (const id of [...deps].sort()) {
      const [kind, key] = id.split('\u0000') as [string, string];
      const dep = this.bucket(kind).get(key);
      if (!dep) continue;
      const alive = (dep.metadata.ownerReferences ?? []).some((r) => r.uid !== ownerUid && this.uidExists(r.kind, r.uid));
      if (!alive) void this.delete({ kind, namespace: dep.metadata.namespace, name: dep.metadata.name }, { ignoreNotFound: true });
    }
  }

  private uidExists(kind: string, uid: string): boolean {
    for (const o of this.bucket(kind).values()) if (o.metadata.uid === uid) return true;
    return false;
  }

  private indexOwners(o: KubeObject): void {
    for (const r of o.metadata.ownerReferences ?? []) {
      const set = this.dependents.get(r.uid) ?? new Set<string>();
      this.dependents.set(r.uid, set);
      set.add(`${o.kind}\u0000${this.key({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name })}`);
    }
  }

  private unindexOwners(o: KubeObject): void {
    const id = `${o.kind}\u0000${this.key({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name })}`;
    for (const r of o.metadata.ownerReferences ?? []) this.dependents.get(r.uid)?.delete(id);
  }

  private emit(type: WatchEvent['type'], o: KubeObject, old?: KubeObject): void {
    this.history.push({ rv: Number(o.metadata.resourceVersion), type, object: o, ...(old ? { old } : {}) });
    const cap = this.opts.watchHistory ?? 5000;
    while (this.history.length > cap) this.historyFloor = this.history.shift()!.rv;
    const hs = this.handlers.get(o.kind);
    if (!hs || hs.size === 0) return;
    for (const w of [...hs]) this.deliver(w, type, o, old);
  }

  /** Deliver one event to one watcher, translating selector transitions as the apiserver does. */
  private deliver(w: Watcher, type: WatchEvent['type'], o: KubeObject, old: KubeObject | undefined): void {
    const t = w.match ? selectedEventType(w.match, type, o, old) : type;
    if (t) w.handler({ type: t, object: w.shared ? o : jsonClone(o) });
  }

  private bucket(kind: string): Map<string, KubeObject> {
    let b = this.objects.get(kind);
    if (!b) {
      resourceForKind(kind);
      b = new Map();
      this.objects.set(kind, b);
    }
    return b;
  }

  private key(ref: ObjectRef): string {
    return keyOf(ref);
  }

  private nextRv(): string {
    return String(++this.rv);
  }
}

