/**
 * Background cascading deletion by ownerReferences, for management clusters
 * that have no kube-controller-manager (a bare kube-apiserver, as envtest
 * runs one). The embedded store does the same inside its delete
 * (EmbeddedStore.collectGarbage); kind runs the real garbage collector.
 *
 * Semantics, after kube-controller-manager's garbage collector
 * (k8s.io/kubernetes/pkg/controller/garbagecollector, "attemptToDelete"):
 * when an owner is deleted, each dependent is looked at; if none of its
 * owners still exists — an owner reference is dangling when GET of
 * (kind, dependent's namespace, name) is NotFound or returns another uid —
 * the dependent is deleted (Background propagation, so its own dependents
 * follow the same way). A dependent with a live owner left is kept.
 * Foreground deletion and orphaning are not used by the testbed's
 * controllers and are not modelled.
 */
import type { EventLog } from '../events.js';
import type { KubeClient } from '../kube/client.js';
import { resourceForKind } from '../kube/resources.js';
import type { KubeObject } from '../kube/types.js';
import type { Manager } from './manager.js';

export const GARBAGE_COLLECTOR = 'garbage-collector';

export interface GarbageCollectorOptions {
  mgmt: KubeClient;
  manager: Manager;
  events?: EventLog;
  /** Kinds whose objects can be owners or dependents (all watched). */
  kinds: readonly string[];
}

function depKey(o: KubeObject): string {
  return `${o.kind}|${o.metadata.namespace ?? ''}|${o.metadata.name}`;
}

/** Register the garbage collector as a controller; returns its watch stoppers. */
export function setupGarbageCollector(opts: GarbageCollectorOptions): () => void {
  const { mgmt, manager } = opts;
  /** owner uid -> dependents' keys */
  const dependents = new Map<string, Set<string>>();
  /** dependent key -> the owner uids it was indexed under */
  const ownersOf = new Map<string, string[]>();
  const deleted = new Set<string>();

  const index = (o: KubeObject): void => {
    const k = depKey(o);
    for (const u of ownersOf.get(k) ?? []) dependents.get(u)?.delete(k);
    const uids = (o.metadata.ownerReferences ?? []).map((r) => r.uid);
    if (uids.length === 0) {
      ownersOf.delete(k);
      return;
    }
    ownersOf.set(k, uids);
    for (const u of uids) {
      const set = dependents.get(u) ?? new Set<string>();
      dependents.set(u, set);
      set.add(k);
    }
    // An owner deleted before this dependent was indexed (the watches of two kinds are not ordered).
    if (uids.some((u) => deleted.has(u))) manager.enqueue(GARBAGE_COLLECTOR, k);
  };
  const unindex = (o: KubeObject): void => {
    const k = depKey(o);
    for (const u of ownersOf.get(k) ?? []) dependents.get(u)?.delete(k);
    ownersOf.delete(k);
  };

  manager.register({
    name: GARBAGE_COLLECTOR,
    async reconcile(key) {
      const [kind, namespace, name] = key.split('|') as [string, string, string];
      const dep = await mgmt.get<KubeObject>({ kind, ...(namespace ? { namespace } : {}), name });
      const refs = dep?.metadata.ownerReferences ?? [];
      if (!dep || refs.length === 0) return;
      for (const r of refs) {
        let info;
        try {
          info = resourceForKind(r.kind);
        } catch {
          return; // an owner kind the testbed does not know: keep the dependent (the real GC would resolve it)
        }
        const owner = await mgmt.get<KubeObject>({ kind: r.kind, ...(info.namespaced ? { namespace } : {}), name: r.name });
        if (owner && owner.metadata.uid === r.uid) return;
      }
      opts.events?.record({ source: 'kube', type: 'gc.delete', message: `garbage collector: deleting ${kind} ${namespace}/${name} (every owner is gone)`, data: { kind, namespace, name } });
      await mgmt.delete({ kind, ...(namespace ? { namespace } : {}), name }, { ignoreNotFound: true });
    },
  });

  const stops = opts.kinds.map((kind) =>
    mgmt.watch<KubeObject>(
      kind,
      (e) => {
        const o = e.object;
        if (e.type === 'DELETED') {
          unindex(o);
          const uid = o.metadata.uid;
          if (!uid) return;
          deleted.add(uid);
          for (const k of [...(dependents.get(uid) ?? [])].sort()) manager.enqueue(GARBAGE_COLLECTOR, k);
          dependents.delete(uid);
        } else index(o);
      },
      { shared: true },
    ),
  );
  return () => {
    for (const s of stops) s();
  };
}
