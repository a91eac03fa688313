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
  /** Equality label selector. */
  labelSelector?: Record<string, string>;
}

export type PatchType = 'merge' | 'json';

export interface KubeClient {
  get<T extends KubeObject>(ref: ObjectRef): Promise<T | undefined>;
  list<T extends KubeObject>(kind: string, opts?: ListOptions): Promise<T[]>;
  create<T extends KubeObject>(obj: T): Promise<T>;
  /** Replace (spec, metadata). Fails with Conflict when resourceVersion is stale. Status is ignored for kinds with a status subresource. */
  update<T extends KubeObject>(obj: T): Promise<T>;
  /** Replace status only. Fails with Conflict when resourceVersion is stale. */
  updateStatus<T extends KubeObject>(obj: T): Promise<T>;
  patch<T extends KubeObject>(ref: ObjectRef, type: PatchType, patch: unknown, opts?: { subresource?: 'status' }): Promise<T>;
  /** Deletes, or marks for deletion when finalizers are present. NotFound is not an error when `ignoreNotFound`. */
  delete(ref: ObjectRef, opts?: { ignoreNotFound?: boolean }): Promise<void>;
  /** Subscribe to changes of one kind. Handlers of the embedded store run synchronously after each write. */
  watch<T extends KubeObject>(kind: string, handler: (e: WatchEvent<T>) => void): () => void;
}
