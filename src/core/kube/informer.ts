/**
 * A shared informer for one kind on a remote apiserver, as client-go's
 * SharedIndexInformer: one list + watch per kind (all namespaces, no
 * selector), a cache of the latest object per key, and a fan-out to any
 * number of subscribers with their own namespace/label/field selectors.
 *
 * Why client-side selectors: a server-side selected watch never sees writes
 * that do not match it, so nobody could tell when such a watch has "caught
 * up" with a write. With one unfiltered watch per kind, every write of the
 * kind is eventually delivered here, and `delivered` (the highest
 * resourceVersion seen in events and bookmarks) says how far the stream has
 * got. Selector transitions are computed as the apiserver computes them for
 * a selected watch (selectedEventType in src/core/kube/selectors.ts, which the
 * embedded store uses too).
 *
 * resourceVersions are compared as numbers: on kube-apiserver with etcd3 they
 * are etcd revisions (k8s.io/apiserver/pkg/storage/etcd3 APIObjectVersioner),
 * the same assumption the apiserver's own watch cache makes.
 */
import { deepFreeze } from './embedded-store.js';
import { jsonClone } from './patch.js';
import { objectFilter, selectedEventType } from './selectors.js';
import type { ListOptions } from './client.js';
import type { KubeObject, WatchEvent } from './types.js';

export interface InformerSource {
  /** List every object of the kind (all namespaces) with the list's resourceVersion. */
  list(): Promise<{ items: KubeObject[]; resourceVersion: string }>;
  /**
   * Watch every object of the kind from `resourceVersion` (bookmarks on).
   * `onEvent` gets ADDED/MODIFIED/DELETED/BOOKMARK/ERROR with the decoded object;
   * `onDone` is called once when the stream ends (err undefined: closed by the server).
   */
  watch(resourceVersion: string, onEvent: (phase: string, obj: KubeObject & { code?: number; reason?: string }) => void, onDone: (err: unknown) => void): Promise<() => void>;
  /** Errors after retries (shown to subscribers' onError). */
  onError?: (e: unknown) => void;
}

interface Subscriber {
  handler: (e: WatchEvent) => void;
  match?: (o: KubeObject) => boolean;
  shared: boolean;
  onError?: (e: unknown) => void;
}

export function keyOfObject(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

export function rvNumber(rv: string | undefined): number {
  const n = Number(rv);
  return Number.isFinite(n) ? n : 0;
}

export class KindInformer {
  /** Latest object per "namespace/name" (deep-frozen: subscribers with `shared` get these). */
  readonly cache = new Map<string, KubeObject>();
  /** Highest resourceVersion delivered (events, bookmarks, or the list the watch started from). */
  delivered = 0;
  /** uids seen deleted (a delete whose DELETED event arrived before the delete call returned). */
  private readonly deletedUids = new Set<string>();
  private readonly subs = new Set<Subscriber>();
  private waiters: (() => void)[] = [];
  private stopped = false;
  private stopWatch: (() => void) | undefined;
  private retry: NodeJS.Timeout | undefined;
  private rv = '';
  readonly ready: Promise<void>;
  private markReady!: () => void;
  isReady = false;

  constructor(
    readonly kind: string,
    private readonly source: InformerSource,
  ) {
    this.ready = new Promise<void>((res) => (this.markReady = res));
  }

  start(): void {
    void this.run(true);
  }

  stop(): void {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.stopWatch?.();
    this.wake();
  }

  /** Subscribe to changes from now on (the embedded store's watch without a resourceVersion). */
  subscribe(handler: (e: WatchEvent) => void, opts: ListOptions & { shared?: boolean; onError?: (e: unknown) => void } = {}): () => void {
    const match = objectFilter(this.kind, opts);
    const s: Subscriber = { handler, shared: !!opts.shared, ...(match ? { match } : {}), ...(opts.onError ? { onError: opts.onError } : {}) };
    this.subs.add(s);
    return () => this.subs.delete(s);
  }

  wasDeleted(uid: string): boolean {
    return this.deletedUids.has(uid);
  }

  /** Resolves at the next delivered change (or stop). */
  changed(): Promise<void> {
    return new Promise((res) => this.waiters.push(res));
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private async run(initial: boolean): Promise<void> {
    if (this.stopped) return;
    try {
      if (initial || this.rv === '') await this.relist(!initial);
      let gone = false;
      this.stopWatch = await this.source.watch(
        this.rv,
        (phase, obj) => {
          if (this.stopped) return;
          if (phase === 'ERROR') {
            // 410 Gone: the version we resume from was compacted away: re-list (client-go's Reflector does the same).
            if (obj.code === 410 || obj.reason === 'Expired' || obj.reason === 'Gone') gone = true;
            else this.error(obj);
            return;
          }
          const rv = rvNumber(obj.metadata?.resourceVersion);
          if (obj.metadata?.resourceVersion) this.rv = obj.metadata.resourceVersion;
          if (phase !== 'BOOKMARK') this.apply(phase as WatchEvent['type'], obj);
          if (rv > this.delivered) this.delivered = rv;
          this.wake();
        },
        (err) => {
          if (this.stopped) return;
          if (gone) this.rv = '';
          else if (err) this.error(err);
          this.retry = setTimeout(() => void this.run(false), err && !gone ? 500 : 0);
        },
      );
      if (this.stopped) this.stopWatch();
      if (!this.isReady) {
        this.isReady = true;
        this.markReady();
        this.wake();
      }
    } catch (e) {
      this.error(e);
      if (!this.stopped) this.retry = setTimeout(() => void this.run(false), 500);
    }
  }

  private error(e: unknown): void {
    this.source.onError?.(e);
    for (const s of this.subs) s.onError?.(e);
  }

  /** Replace the cache with a fresh list; after the first list, report the differences as events (client-go's Replace). */
  private async relist(notify: boolean): Promise<void> {
    const l = await this.source.list();
    const seen = new Set<string>();
    for (const o of l.items) {
      const k = keyOfObject(o);
      seen.add(k);
      const cur = this.cache.get(k);
      if (!notify) {
        this.cache.set(k, deepFreeze(o));
        continue;
      }
      if (!cur) this.apply('ADDED', o);
      else if (cur.metadata.resourceVersion !== o.metadata.resourceVersion) this.apply('MODIFIED', o);
    }
    for (const [k, o] of [...this.cache]) {
      if (seen.has(k)) continue;
      if (notify) this.apply('DELETED', o);
      else this.cache.delete(k);
    }
    this.rv = l.resourceVersion;
    const rv = rvNumber(l.resourceVersion);
    if (rv > this.delivered) this.delivered = rv;
    this.wake();
  }

  private apply(type: WatchEvent['type'], input: KubeObject): void {
    const k = keyOfObject(input);
    const old = this.cache.get(k);
    const o = deepFreeze(input);
    if (type === 'DELETED') {
      this.cache.delete(k);
      if (o.metadata.uid) this.deletedUids.add(o.metadata.uid);
    } else this.cache.set(k, o);
    for (const s of [...this.subs]) {
      const t = s.match ? selectedEventType(s.match, type, o, old) : type;
      if (t) s.handler({ type: t, object: s.shared ? o : jsonClone(o) });
    }
  }
}
