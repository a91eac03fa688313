/**
 * Which stored objects carry which labels, per kind: a list with a label
 * selector then visits only the objects its equality (`a=b`), set (`a in
 * (x,y)`) or existence (`a`) requirements allow, instead of every object of
 * the kind. With 1,000 Machines, a Machine deletion's check for control-plane
 * Machines (`cluster-name=X,cluster.x-k8s.io/control-plane`) read all 1,000
 * on every reconcile; in a fleet of 100 clusters each list by cluster name
 * would read all the fleet's Machines (docs/performance.md).
 *
 * The index only narrows: the store still applies the whole selector (and
 * namespace and field selectors) to each candidate, and returns them in list
 * order, so results are those of a full scan.
 */
import type { LabelRequirement } from './selectors.js';

type Labels = Readonly<Record<string, string>> | undefined;

interface KeyEntry {
  /** Objects that carry the label key, whatever its value. */
  all: Set<string>;
  byValue: Map<string, Set<string>>;
}

const NONE: ReadonlySet<string> = new Set();

export class LabelIndex {
  private readonly kinds = new Map<string, Map<string, KeyEntry>>();

  /**
   * Object `key` of `kind` went from labels `before` to `after` (undefined:
   * not stored, or no labels). Unchanged labels (the same object, as the
   * store shares unchanged metadata parts) cost nothing.
   */
  update(kind: string, key: string, before: Labels, after: Labels): void {
    if (before === after) return;
    let keys = this.kinds.get(kind);
    if (!keys) this.kinds.set(kind, (keys = new Map()));
    if (before) {
      for (const k of Object.keys(before)) {
        const had = before[k]!;
        const has = after !== undefined && Object.prototype.hasOwnProperty.call(after, k);
        if (has && after[k] === had) continue;
        const e = keys.get(k);
        if (!e) continue;
        const vs = e.byValue.get(had);
        vs?.delete(key);
        if (vs?.size === 0) e.byValue.delete(had);
        if (!has) {
          e.all.delete(key);
          if (e.all.size === 0) keys.delete(k);
        }
      }
    }
    if (after) {
      for (const k of Object.keys(after)) {
        const v = after[k]!;
        const had = before !== undefined && Object.prototype.hasOwnProperty.call(before, k);
        if (had && before[k] === v) continue;
        let e = keys.get(k);
        if (!e) keys.set(k, (e = { all: new Set(), byValue: new Map() }));
        e.all.add(key);
        let vs = e.byValue.get(v);
        if (!vs) e.byValue.set(v, (vs = new Set()));
        vs.add(key);
      }
    }
  }

  /**
   * The smallest set of object keys of `kind` that can match `reqs` as far as
   * one of its `=`, `in` or existence requirements tells; undefined when none
   * of the requirements narrows (only `!=`, `notin`, `!`). The caller applies
   * the whole selector to each candidate.
   */
  candidates(kind: string, reqs: readonly LabelRequirement[]): ReadonlySet<string> | undefined {
    const keys = this.kinds.get(kind);
    let best: ReadonlySet<string> | undefined;
    for (const r of reqs) {
      let c: ReadonlySet<string> | undefined;
      const e = keys?.get(r.key);
      if (r.op === '=') c = e?.byValue.get(r.values[0]!) ?? NONE;
      else if (r.op === 'exists') c = e?.all ?? NONE;
      else if (r.op === 'in') {
        const sets = r.values.map((v) => e?.byValue.get(v)).filter((s): s is Set<string> => s !== undefined);
        if (sets.length === 1) c = sets[0]!;
        else if (sets.length === 0) c = NONE;
        else if (best === undefined || sets.reduce((n, s) => n + s.size, 0) < best.size) c = new Set(sets.flatMap((s) => [...s]));
      }
      if (c !== undefined && (best === undefined || c.size < best.size)) best = c;
      if (best?.size === 0) return best;
    }
    return best;
  }
}
