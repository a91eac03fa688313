import type { KubeObject, ObjectRef, WatchEvent } from './types.js';

/**
 * The one Kubernetes client interface every controller uses (ARCHITECTURE:
 * "One code path for controllers"). Implemented by the embedded in-process
 * store and, for real clusters, by @kubernetes/client-node.
 *
 * Errors are KubeApiError (NotFound, Conflict, Invalid, ...).
 */
export interface ListOptions {
  namespace?: string;
  /** Label selector: an equality map, or a selector string (`a=b,c in (x,y),!d`). */
  labelSelector?: Record<string, string> | string;
  /** Field selector string: `metadata.name=x`, `metadata.namespace!=y` (plus per-kind fields such as Event `involvedObject.uid`). */
  fieldSelector?: string;
}

export interface WatchOptions extends ListOptions {
  /**
   * Resume after this resourceVersion: events newer than it are replayed
   * first. A version older than the retained history fails with 410 Gone
   * (thrown by the embedded store, passed to `onError` by remote backends).
   * Unset: only changes from now on (no initial state).
   */
  resourceVersion?: string;
  /** Remote backends report watch failures (after their own retries) here. */
  onError?: (e: unknown) => void;
  /** Called once the watch is established (synchronously by the embedded store). */
  onReady?: () => void;
  /**
   * The handler only reads the events' objects: a backend may hand it shared,
   * deep-frozen objects instead of private copies (the embedded store does;
   * remote backends decode a fresh object per event anyway).
   */
  shared?: boolean;
}

/** Options of a write, as the apiserver's query parameters. */
export interface WriteOptions {
  /** `dryRun=All`: run the whole request (defaulting, validation, admission) but store nothing. */
  dryRun?: boolean;
  /** Unknown fields: Strict rejects (400), Warn keeps going with warnings, Ignore (default) prunes silently. */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  /** Filled with warnings (e.g. unknown fields under fieldValidation=Warn). */
  warnings?: string[];
}

export type PatchType = 'merge' | 'json';

export interface KubeClient {
  get<T extends KubeObject>(ref: ObjectRef): Promise<T | undefined>;
  list<T extends KubeObject>(kind: string, opts?: ListOptions): Promise<T[]>;
  create<T extends KubeObject>(obj: T, opts?: WriteOptions): Promise<T>;
  /** Replace (spec, metadata). Fails with Conflict when resourceVersion is stale. Status is ignored for kinds with a status subresource. */
  update<T extends KubeObject>(obj: T, opts?: WriteOptions): Promise<T>;
  /** Replace status only. Fails with Conflict when resourceVersion is stale. */
  updateStatus<T extends KubeObject>(obj: T, opts?: WriteOptions): Promise<T>;
  patch<T extends KubeObject>(ref: ObjectRef, type: PatchType, patch: unknown, opts?: { subresource?: 'status' } & WriteOptions): Promise<T>;
  /** Deletes, or marks for deletion when finalizers are present. NotFound is not an error when `ignoreNotFound`. */
  delete(ref: ObjectRef, opts?: { ignoreNotFound?: boolean }): Promise<void>;
  /**
   * Subscribe to changes of one kind (optionally filtered, optionally resumed
   * from a resourceVersion). Handlers of the embedded store run synchronously
   * after each write; with a selector, an object that stops matching is
   * reported as DELETED and one that starts matching as ADDED (as the apiserver does).
   */
  watch<T extends KubeObject>(kind: string, handler: (e: WatchEvent<T>) => void, opts?: WatchOptions): () => void;
  /**
   * Optional cheap reads for read-only callers: like get/list, but the result
   * may be a shared, deep-frozen object (the embedded store freezes what it
   * stores and hands it out without copying). Never mutate it; copy first
   * (structuredClone) to build a write. Use the helpers below, which fall
   * back to get/list on backends without them.
   */
  getShared?<T extends KubeObject>(ref: ObjectRef): Promise<Readonly<T> | undefined>;
  listShared?<T extends KubeObject>(kind: string, opts?: ListOptions): Promise<readonly Readonly<T>[]>;
  /** Optional: updateStatus whose result may be the shared, deep-frozen stored object (same rules as getShared). */
  updateStatusShared?<T extends KubeObject>(obj: T, opts?: WriteOptions): Promise<Readonly<T>>;
  /**
   * Optional synchronous shared reads (same rules as getShared), only on
   * backends that answer without I/O and run watch handlers inside each write
   * (the embedded store): a caller may then read without a microtask per
   * object, and keep state derived from a list current with a watch started in
   * the same synchronous step. Backends with asynchronous watches leave them
   * out, and callers fall back to getShared/listShared.
   */
  getSharedSync?<T extends KubeObject>(ref: ObjectRef): Readonly<T> | undefined;
  listSharedSync?<T extends KubeObject>(kind: string, opts?: ListOptions): readonly Readonly<T>[];
  /** Optional (the embedded store): the namespace's objects of `kind` with an ownerReference to `ownerUid`, shared, in list order. */
  listOwnedSharedSync?<T extends KubeObject>(kind: string, namespace: string, ownerUid: string): readonly Readonly<T>[];
}

/** Read-only get: a shared frozen object where the backend supports it, else a private copy. */
export function getShared<T extends KubeObject>(client: KubeClient, ref: ObjectRef): Promise<Readonly<T> | undefined> {
  return client.getShared ? client.getShared<T>(ref) : client.get<T>(ref);
}

/** Read-only list: shared frozen objects where the backend supports it, else private copies. */
export function listShared<T extends KubeObject>(client: KubeClient, kind: string, opts?: ListOptions): Promise<readonly Readonly<T>[]> {
  return client.listShared ? client.listShared<T>(kind, opts) : client.list<T>(kind, opts);
}

/** updateStatus for callers that only read the result: the stored object where the backend supports it, else a private copy. */
export function updateStatusShared<T extends KubeObject>(client: KubeClient, obj: T, opts?: WriteOptions): Promise<Readonly<T>> {
  return client.updateStatusShared ? client.updateStatusShared<T>(obj, opts) : client.updateStatus<T>(obj, opts);
}

/**
 * Read-only list of the namespace's objects of `kind` that have an
 * ownerReference to `ownerUid`, in list order: through the backend's owner
 * index where it has one (the embedded store), else the namespace's list
 * filtered (what a controller does over its informer cache).
 */
export async function listOwned<T extends KubeObject>(client: KubeClient, kind: string, namespace: string, ownerUid: string): Promise<readonly Readonly<T>[]> {
  if (client.listOwnedSharedSync) return client.listOwnedSharedSync<T>(kind, namespace, ownerUid);
  return (await listShared<T>(client, kind, { namespace })).filter((o) => o.metadata.ownerReferences?.some((r) => r.uid === ownerUid));
}
